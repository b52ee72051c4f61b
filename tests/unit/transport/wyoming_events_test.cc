#include "transport/wyoming/wyoming_events.h"

#include "core/error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "transport/wyoming/wyoming_frame.h"

namespace voxserve::transport::wyoming {
namespace {

using nlohmann::json;

Event Decode(const std::string& frame) {
  FrameParser parser;
  parser.Append(frame);
  auto next = parser.Next();
  EXPECT_TRUE(next.ok() && next->has_value());
  EXPECT_EQ(parser.buffered(), 0u);
  return next.ok() && next->has_value() ? **next : Event{};
}

TEST(WyomingEventsTest, SynthesizeReadsTextAndVoiceAsTheReferenceDoes) {
  auto event = ParseSynthesize({{"text", "Hi."},
                                {"voice", {{"name", "en_US-multi-medium"}, {"speaker", "bob"}}},
                                {"text_format", "text"},
                                {"context", {{"a", 1}}}});
  ASSERT_TRUE(event.ok()) << event.status();
  EXPECT_EQ(event->text, "Hi.");
  EXPECT_EQ(event->voice.name, "en_US-multi-medium");
  EXPECT_EQ(event->voice.speaker, "bob");
  EXPECT_FALSE(event->voice.language);
  // A name hides a language (SynthesizeVoice.from_dict).
  auto both = ParseSynthesize({{"text", "x"}, {"voice", {{"name", "a"}, {"language", "de"}}}});
  ASSERT_TRUE(both.ok());
  EXPECT_FALSE(both->voice.language);
  auto language = ParseSynthesizeStart({{"voice", {{"language", "de_DE"}}}});
  ASSERT_TRUE(language.ok());
  EXPECT_EQ(language->language, "de_DE");
  EXPECT_FALSE(language->name);
  auto none = ParseSynthesizeStart(json::object());
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->name || none->language || none->speaker);
}

TEST(WyomingEventsTest, WrongFieldsAreInvalidEventsNamingTheField) {
  for (const json& data :
       {json{{"voice", {{"name", "x"}}}}, json{{"text", 5}},
        json{{"text", "x"}, {"voice", "en-us"}}, json{{"text", "x"}, {"voice", {{"name", 3}}}},
        json{{"text", "x"}, {"voice", {{"language", false}}}}}) {
    auto event = ParseSynthesize(data);
    ASSERT_FALSE(event.ok()) << data;
    EXPECT_EQ(event.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(core::DetailOf(event.status()).code, "invalid_event");
    EXPECT_FALSE(core::DetailOf(event.status()).param.empty());
  }
  EXPECT_FALSE(ParseSynthesizeChunk(json::object()).ok());
  EXPECT_EQ(*ParseSynthesizeChunk({{"text", "Hel"}}), "Hel");
}

TEST(WyomingEventsTest, AudioEventsCarryTheFormatAndThePcm) {
  Event start = Decode(AudioStartFrame(22050, 0));
  EXPECT_EQ(start.type, "audio-start");
  EXPECT_EQ(start.data, json({{"rate", 22050}, {"width", 2}, {"channels", 1}, {"timestamp", 0}}));
  Event chunk = Decode(AudioChunkFrame(16000, std::string("\x01\x00\x02\x00", 4), 64));
  EXPECT_EQ(chunk.type, "audio-chunk");
  EXPECT_EQ(chunk.data["rate"], 16000);
  EXPECT_EQ(chunk.data["timestamp"], 64);
  EXPECT_EQ(chunk.payload, std::string("\x01\x00\x02\x00", 4));
  EXPECT_EQ(Decode(AudioStopFrame(1500)).data["timestamp"], 1500);
  EXPECT_EQ(Decode(SynthesizeStoppedFrame()).type, "synthesize-stopped");
  Event error = Decode(ErrorFrame("voice 'x' does not exist", "voice_not_found"));
  EXPECT_EQ(error.data, json({{"text", "voice 'x' does not exist"}, {"code", "voice_not_found"}}));
  EXPECT_EQ(Decode(PongFrame(std::string("hi"))).data["text"], "hi");
  EXPECT_EQ(*ParsePing({{"text", "hi"}}), "hi");
  EXPECT_FALSE(ParsePing(json::object()));
}

}  // namespace
}  // namespace voxserve::transport::wyoming
