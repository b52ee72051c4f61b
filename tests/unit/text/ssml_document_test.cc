#include "text/ssml/ssml_document.h"

#include <string>

#include "core/error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace voxserve::text::ssml {
namespace {

using ::testing::HasSubstr;
using Kind = SpeechItem::Kind;

std::vector<SpeechItem> Parse(std::string_view document) {
  auto items = ParseSsml(document);
  EXPECT_TRUE(items.ok()) << items.status();
  return items.ok() ? *items : std::vector<SpeechItem>{};
}

// The text of every item, in order (the service joins runs of one style the same way).
std::string Joined(const std::vector<SpeechItem>& items) {
  std::string text;
  for (const SpeechItem& item : items) text += item.text;
  return text;
}

absl::Status Refusal(std::string_view document) {
  auto items = ParseSsml(document);
  EXPECT_FALSE(items.ok()) << "parsed: " << document;
  return items.ok() ? absl::OkStatus() : items.status();
}

TEST(LooksLikeSsml, SpeakAtTheStartAfterWhitespaceOrAnXmlDeclaration) {
  EXPECT_TRUE(LooksLikeSsml("<speak>Hi</speak>"));
  EXPECT_TRUE(LooksLikeSsml("  \n<speak version=\"1.1\">Hi</speak>"));
  EXPECT_TRUE(LooksLikeSsml("<?xml version=\"1.0\"?>\n<speak>Hi</speak>"));
  EXPECT_TRUE(LooksLikeSsml("<speak/>"));
  EXPECT_FALSE(LooksLikeSsml("Hello <speak>"));
  EXPECT_FALSE(LooksLikeSsml("<speaker>Hi</speaker>"));
  EXPECT_FALSE(LooksLikeSsml("Tom & Jerry"));
}

TEST(ParseSsml, PlainTextInSpeakIsOneItem) {
  auto items = Parse("<speak>Hello   world.\n  Bye.</speak>");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].kind, Kind::kText);
  EXPECT_EQ(items[0].text, "Hello world. Bye.");
  EXPECT_EQ(items[0].rate, 1.0);
  EXPECT_TRUE(items[0].voice.empty());
}

TEST(ParseSsml, BreakTimeAndStrength) {
  auto items = Parse(
      "<speak>A<break time=\"500ms\"/>B<break time=\"1.5s\"/>C<break strength=\"x-weak\"/>D"
      "<break/>E<break strength=\"none\"/>F</speak>");
  ASSERT_EQ(items.size(), 9u);
  EXPECT_EQ(items[1].kind, Kind::kBreak);
  EXPECT_DOUBLE_EQ(items[1].break_seconds, 0.5);
  EXPECT_DOUBLE_EQ(items[3].break_seconds, 1.5);
  EXPECT_DOUBLE_EQ(items[5].break_seconds, 0.25);
  EXPECT_DOUBLE_EQ(items[7].break_seconds, 0.75);  // a bare <break/> is "medium"
  EXPECT_EQ(items[8].text, "EF");                  // strength="none" is no break
}

TEST(ParseSsml, ProsodyRatePitchAndVolumeNestAndMultiply) {
  auto items = Parse(
      "<speak><prosody rate=\"50%\" pitch=\"+10%\" volume=\"-6dB\">slow <prosody rate=\"x-fast\" "
      "pitch=\"+12st\">fast</prosody></prosody> plain</speak>");
  ASSERT_EQ(items.size(), 3u);
  EXPECT_DOUBLE_EQ(items[0].rate, 0.5);
  EXPECT_DOUBLE_EQ(items[0].pitch, 1.1);
  EXPECT_DOUBLE_EQ(items[0].volume_db, -6.0);
  EXPECT_DOUBLE_EQ(items[1].rate, 0.5 * 1.75);
  EXPECT_NEAR(items[1].pitch, 2.2, 1e-9);
  EXPECT_EQ(items[2].text, " plain");
  EXPECT_DOUBLE_EQ(items[2].rate, 1.0);
}

TEST(ParseSsml, RateForms) {
  for (const auto& [rate, factor] : std::vector<std::pair<std::string, double>>{{"x-slow", 0.5},
                                                                                {"slow", 0.75},
                                                                                {"medium", 1.0},
                                                                                {"fast", 1.25},
                                                                                {"+20%", 1.2},
                                                                                {"-25%", 0.75},
                                                                                {"150%", 1.5},
                                                                                {"1.3", 1.3}}) {
    auto items = Parse("<speak><prosody rate=\"" + rate + "\">x</prosody></speak>");
    ASSERT_EQ(items.size(), 1u) << rate;
    EXPECT_DOUBLE_EQ(items[0].rate, factor) << rate;
  }
}

TEST(ParseSsml, SilentVolume) {
  auto items = Parse("<speak><prosody volume=\"silent\">hush</prosody></speak>");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].volume_db, kSilentDb);
}

TEST(ParseSsml, EmphasisSlowsAndRaisesTheVolume) {
  auto items = Parse("<speak><emphasis level=\"strong\">very</emphasis> much</speak>");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_LT(items[0].rate, 1.0);
  EXPECT_GT(items[0].volume_db, 0.0);
  EXPECT_EQ(items[1].rate, 1.0);
}

TEST(ParseSsml, SayAsIsExpanded) {
  auto items = Parse(
      "<speak>Chapter <say-as interpret-as=\"ordinal\">3</say-as>, page "
      "<say-as interpret-as=\"cardinal\">1,204</say-as>, code "
      "<say-as interpret-as=\"characters\">AB7</say-as>.</speak>");
  EXPECT_EQ(Joined(items), "Chapter third, page one thousand two hundred four, code A B seven.");
  // What the markup decided is kept apart, for pronunciation dictionaries to leave alone.
  ASSERT_EQ(items.size(), 7u);
  EXPECT_FALSE(items[0].verbatim);
  EXPECT_TRUE(items[1].verbatim);
  EXPECT_EQ(items[1].text, "third");
  for (const SpeechItem& item : items) EXPECT_EQ(item.rate, 1.0);
}

TEST(ParseSsml, SayAsFollowsXmlLang) {
  auto items =
      Parse("<speak xml:lang=\"de-DE\"><say-as interpret-as=\"cardinal\">42</say-as></speak>");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].text, "42");  // not English: left to the engine's own reading
}

TEST(ParseSsml, SubSpeaksTheAlias) {
  auto items = Parse("<speak>The <sub alias=\"World Wide Web\">WWW</sub> rocks.</speak>");
  EXPECT_EQ(Joined(items), "The World Wide Web rocks.");
  ASSERT_EQ(items.size(), 3u);
  EXPECT_TRUE(items[1].verbatim);
}

TEST(ParseSsml, PhonemeIsItsOwnItemWithTheGraphemes) {
  auto items =
      Parse("<speak>Say <phoneme alphabet=\"ipa\" ph=\"təˈmɑːtoʊ\">tomato</phoneme> now.</speak>");
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].text, "Say ");
  EXPECT_EQ(items[1].text, "tomato");
  EXPECT_EQ(items[1].phonemes, "təˈmɑːtoʊ");
  EXPECT_EQ(items[2].text, " now.");
  EXPECT_TRUE(items[2].phonemes.empty());
}

TEST(ParseSsml, PhonemeInOtherAlphabetsIsRefused) {
  absl::Status status =
      Refusal("<speak><phoneme alphabet=\"x-sampa\" ph=\"t@\">the</phoneme></speak>");
  EXPECT_THAT(status.message(), HasSubstr("only \"ipa\""));
  EXPECT_EQ(core::DetailOf(status).code, "invalid_ssml");
}

TEST(ParseSsml, VoiceSwitchesAndSentencesStartNewItems) {
  auto items =
      Parse("<speak><s>One.</s><s>Two.</s><voice name=\"en-us+f3\">Three.</voice> Four.</speak>");
  ASSERT_EQ(items.size(), 4u);
  EXPECT_TRUE(items[1].starts_sentence);
  EXPECT_EQ(items[2].voice, "en-us+f3");
  EXPECT_EQ(items[2].text, "Three.");
  EXPECT_TRUE(items[3].voice.empty());
}

TEST(ParseSsml, UnknownElementsAreTransparentAndMetadataIsSilent) {
  auto items = Parse(
      "<speak><mstts:express-as style=\"cheerful\">Happy</mstts:express-as> <lang "
      "xml:lang=\"en\">days</lang><metadata><rdf>secret</rdf></metadata><audio "
      "src=\"a.wav\"><desc>a bell</desc>ding</audio><mark name=\"x\"/>.</speak>");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].text, "Happy daysding.");
}

TEST(ParseSsml, NamespacesDecideWhatAnElementIs) {
  // Issue 39: these were skipped without a word.
  EXPECT_THAT(Refusal("<speak xmlns=\"urn:other\">Hi.</speak>").message(),
              HasSubstr("is in namespace 'urn:other', not SSML's"));
  EXPECT_THAT(Refusal("<speak>One. <x:break time=\"2s\"/> Two.</speak>").message(),
              HasSubstr("<x:break> is not SSML's <break>: its prefix 'x' is not declared"));
  EXPECT_THAT(Refusal("<speak xmlns:x=\"urn:other\">A<x:break/>B</speak>").message(),
              HasSubstr("is bound to 'urn:other'"));
  EXPECT_EQ(core::DetailOf(Refusal("<speak><x:break/></speak>")).code, "invalid_ssml");
  // SSML's own namespace, as default or under a prefix, is SSML.
  const std::string ssml = "http://www.w3.org/2001/10/synthesis";
  auto prefixed =
      Parse("<s:speak xmlns:s=\"" + ssml + "\">One. <s:break time=\"2s\"/> Two.</s:speak>");
  ASSERT_EQ(prefixed.size(), 3u);
  EXPECT_EQ(prefixed[1].kind, Kind::kBreak);
  EXPECT_DOUBLE_EQ(prefixed[1].break_seconds, 2.0);
  EXPECT_EQ(Parse("<speak version=\"1.1\" xmlns=\"" + ssml + "\">Hi.</speak>").size(), 1u);
  // Vendor elements stay transparent, declared (Azure) or not (Amazon Polly's examples).
  EXPECT_EQ(Joined(Parse("<speak><amazon:effect name=\"whispered\">Quiet.</amazon:effect>"
                         "</speak>")),
            "Quiet.");
  EXPECT_EQ(Joined(Parse("<speak xmlns:mstts=\"https://www.w3.org/2001/mstts\"><mstts:express-as "
                         "style=\"cheerful\">Happy.</mstts:express-as></speak>")),
            "Happy.");
}

TEST(ParseSsml, AFragmentIsWrappedInSpeak) {
  auto items = Parse("Hello <break time=\"1s\"/> there &amp; you.");
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].text, "Hello ");
  EXPECT_EQ(items[2].text, " there & you.");
}

TEST(ParseSsml, MalformedNamesLineAndColumn) {
  absl::Status status = Refusal("<speak>\n  <prosody rate=\"fast\">no end\n</speak>");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(core::DetailOf(status).code, "invalid_ssml");
  EXPECT_EQ(core::DetailOf(status).param, "input");
  EXPECT_THAT(status.message(), HasSubstr("mismatched tag"));
  EXPECT_THAT(status.message(), HasSubstr("line 3, column 3"));  // expat: after "</"
}

TEST(ParseSsml, FragmentErrorsCountColumnsInTheClientsText) {
  // "a < b": expat stops after the '<' at column 3, which starts no tag.
  absl::Status status = Refusal("a < b");
  EXPECT_THAT(status.message(), HasSubstr("line 1, column 4"));
}

TEST(ParseSsml, RootMustBeSpeak) {
  absl::Status status = Refusal("<?xml version=\"1.0\"?><voice>Hi</voice>");
  EXPECT_THAT(status.message(), HasSubstr("root element must be <speak>"));
}

TEST(ParseSsml, BadAttributeValuesAreNamed) {
  EXPECT_THAT(Refusal("<speak><break time=\"forever\"/></speak>").message(),
              HasSubstr("<break> time 'forever' is not valid"));
  EXPECT_THAT(Refusal("<speak><break time=\"500\"/></speak>").message(),
              HasSubstr("time '500'"));  // a unit is required
  EXPECT_THAT(Refusal("<speak><break time=\"11s\"/></speak>").message(), HasSubstr("at most 10 s"));
  EXPECT_THAT(Refusal("<speak><prosody rate=\"-5\">x</prosody></speak>").message(),
              HasSubstr("rate '-5'"));
  EXPECT_THAT(Refusal("<speak><prosody pitch=\"120Hz\">x</prosody></speak>").message(),
              HasSubstr("Hz are not taken"));
  EXPECT_THAT(Refusal("<speak><say-as>1</say-as></speak>").message(),
              HasSubstr("needs an interpret-as"));
  EXPECT_THAT(Refusal("<speak><sub>WWW</sub></speak>").message(), HasSubstr("needs an alias"));
}

TEST(ParseSsml, EntityBombIsRefusedAtTheDoctype) {
  absl::Status status = Refusal(
      "<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 "
      "\"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\"><!ENTITY lol3 "
      "\"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\">]><speak>&lol3;</speak>");
  EXPECT_THAT(status.message(), HasSubstr("DOCTYPE is not allowed"));
}

TEST(ParseSsml, ExternalEntityIsRefused) {
  absl::Status status =
      Refusal("<!DOCTYPE speak [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]><speak>&xxe;</speak>");
  EXPECT_THAT(status.message(), HasSubstr("DOCTYPE is not allowed"));
}

TEST(ParseSsml, UndefinedEntityIsAnError) {
  absl::Status status = Refusal("<speak>&nbsp;</speak>");
  EXPECT_THAT(status.message(), HasSubstr("undefined entity"));
}

TEST(ParseSsml, CharacterReferencesAndPredefinedEntitiesWork) {
  auto items = Parse("<speak>caf&#233; &lt;3 &quot;ok&quot;</speak>");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].text, "café <3 \"ok\"");
}

TEST(ParseSsml, NestingDeeperThanTheLimitIsRefused) {
  std::string deep = "<speak>";
  for (int i = 0; i < 40; ++i) deep += "<p>";
  deep += "x";
  for (int i = 0; i < 40; ++i) deep += "</p>";
  deep += "</speak>";
  EXPECT_THAT(Refusal(deep).message(), HasSubstr("nested deeper than 32"));
}

TEST(ParseSsml, ManyBreaksAreFine) {
  std::string many = "<speak>";
  for (int i = 0; i < 500; ++i) many += "a<break time=\"10ms\"/>";
  many += "</speak>";
  EXPECT_EQ(Parse(many).size(), 1000u);
}

TEST(ParseSsml, EmptyAndWhitespaceOnlyDocumentsHaveNoItems) {
  EXPECT_TRUE(Parse("<speak/>").empty());
  EXPECT_TRUE(Parse("<speak>  \n </speak>").empty());
  EXPECT_TRUE(Parse("<speak><p> </p> <s/></speak>").empty());
}

TEST(ParseSsml, InvalidUtf8IsRefused) {
  EXPECT_EQ(Refusal("<speak>\xff\xfe</speak>").code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace voxserve::text::ssml
