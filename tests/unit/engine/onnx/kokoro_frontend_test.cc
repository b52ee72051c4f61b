// Kokoro's text side: vocabulary, kokoro-onnx's phoneme replacements, ≤ 510-token chunks, and the
// voice files as distributed (NPZ and raw .bin).
#include <gtest/gtest.h>

#include "engine/onnx/code_points.h"
#include "engine/onnx/kokoro_phonemes.h"
#include "engine/onnx/kokoro_voices.h"
#include "test_models.h"

namespace voxserve::engine::onnx {
namespace {

KokoroVocab Vocab(std::u32string_view symbols) {
  KokoroVocab vocab;
  for (size_t i = 0; i < symbols.size(); ++i) vocab[symbols[i]] = static_cast<int64_t>(i + 1);
  return vocab;
}

TEST(KokoroVocabTest, ParsesConfigJsonVocab) {
  auto vocab = ParseKokoroVocab(R"({"vocab": {";": 1, "ˈ": 156, "a": 43}, "n_token": 178})", "c");
  ASSERT_TRUE(vocab.ok()) << vocab.status();
  EXPECT_EQ(vocab->at(U'ˈ'), 156);
  EXPECT_EQ(vocab->size(), 3u);
  EXPECT_FALSE(ParseKokoroVocab(R"({"n_token": 178})", "c").ok());
  EXPECT_FALSE(ParseKokoroVocab(R"({"vocab": {"ab": 3}})", "c").ok());
}

TEST(KokoroVocabTest, ParsesATokenizerJsonsVocabWithoutItsPad) {
  // onnx-community's tokenizer.json: a WordLevel model whose vocab also lists the pad "$": 0.
  auto vocab = ParseKokoroVocab(
      R"({"version": "1.0", "model": {"type": "WordLevel", "vocab": {"$": 0, ";": 1, "ˈ": 156}}})",
      "t");
  ASSERT_TRUE(vocab.ok()) << vocab.status();
  EXPECT_EQ(vocab->size(), 2u);
  EXPECT_EQ(vocab->at(U'ˈ'), 156);
  EXPECT_FALSE(vocab->contains(U'$'));
  // A transformers config.json without a vocabulary is none.
  EXPECT_FALSE(ParseKokoroVocab(R"({"model_type": "style_text_to_speech_2"})", "c").ok());
}

TEST(KokoroPhonemesTest, KeepsPunctuationAndAppliesKokoroReplacements) {
  std::vector<PhonemizedClause> clauses = {
      {"həlˈoʊ wˈɜːld", ClauseEnd::kComma},
      {"(en)rˈʌʃə(ru) xˈaʊ", ClauseEnd::kQuestion},
      {"nˈaɪnti", ClauseEnd::kPeriod},
  };
  EXPECT_EQ(EncodeUtf8(KokoroPhonemeString(clauses, /*american_english=*/true)),
            "həlˈoʊ wˈɜːld, ɹˈʌʃə kˈaʊ? nˈaɪndi.");
  EXPECT_EQ(EncodeUtf8(KokoroPhonemeString(clauses, /*american_english=*/false)),
            "həlˈoʊ wˈɜːld, ɹˈʌʃə kˈaʊ? nˈaɪnti.");
}

TEST(KokoroPhonemesTest, SeparatesHundredAndJoinsTrailingZ) {
  std::vector<PhonemizedClause> clauses = {{"tˈuːhˈʌndɹɪd kˈæt z", ClauseEnd::kPeriod}};
  EXPECT_EQ(EncodeUtf8(KokoroPhonemeString(clauses, true)), "tˈuː hˈʌndɹɪd kˈætz.");
}

TEST(KokoroTokensTest, DropsUnknownSymbols) {
  KokoroVocab vocab = Vocab(U"ab ");
  auto chunks = KokoroTokenChunks(U"aΩb", vocab);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0], (std::vector<int64_t>{1, 2}));
}

TEST(KokoroTokensTest, ChunksStayWithinTheContextAndBreakAtPunctuation) {
  KokoroVocab vocab = Vocab(U"a .,");
  std::u32string text;
  for (int i = 0; i < 60; ++i) text += U"aaaa aaaa, ";  // 11 symbols per clause: 660 in all
  auto chunks = KokoroTokenChunks(text, vocab, kKokoroMaxTokens);
  ASSERT_EQ(chunks.size(), 2u);
  size_t total = 0;
  for (const auto& chunk : chunks) {
    EXPECT_LE(chunk.size(), kKokoroMaxTokens);
    EXPECT_EQ(chunk.back(), vocab.at(U','));  // each chunk ends at a clause's comma
    total += chunk.size();
  }
  EXPECT_EQ(total, 660u - 2);  // the space after the comma at each cut is trimmed
}

TEST(KokoroTokensTest, OverlongClauseIsCutAtSpaces) {
  KokoroVocab vocab = Vocab(U"a ");
  std::u32string text;
  for (int i = 0; i < 300; ++i) text += U"aa ";
  auto chunks = KokoroTokenChunks(text, vocab, 100);
  ASSERT_GE(chunks.size(), 9u);
  for (const auto& chunk : chunks) EXPECT_LE(chunk.size(), 100u);
}

TEST(KokoroEspeakVoiceTest, FollowsTheLanguageLetter) {
  EXPECT_EQ(KokoroEspeakVoice("af_heart"), "en-us");
  EXPECT_EQ(KokoroEspeakVoice("bm_george"), "en-gb");
  EXPECT_EQ(KokoroEspeakVoice("ff_siwis"), "fr-fr");
  EXPECT_EQ(KokoroEspeakVoice("zf_xiaobei"), "cmn");
}

TEST(KokoroVoicesTest, ReadsTheNpzVoicesFile) {
  auto voices = KokoroVoices::Load(testing::ModelPath("models/voices-v1.0.bin"));
  ASSERT_TRUE(voices.ok()) << voices.status();
  EXPECT_EQ(voices->Names(), (std::vector<std::string>{"af_test", "bm_test", "ff_test"}));
  // Row r of voice v starts with 0.1 (v + 1) + 0.001 r (make_test_models.py).
  EXPECT_NEAR(voices->Style("bm_test", 7)[0], 0.2 + 0.007, 1e-6);
  EXPECT_EQ(voices->Style("bm_test", 7).size(), kKokoroStyleDim);
  EXPECT_NEAR(voices->Style("af_test", 10'000)[0], 0.1 + 0.509, 1e-6);  // clamped to row 509
}

TEST(KokoroVoicesTest, ReadsAFolderOfRawVoiceFiles) {
  auto voices = KokoroVoices::Load(testing::ModelPath("kokoro_alt/voices"));
  ASSERT_TRUE(voices.ok()) << voices.status();
  EXPECT_EQ(voices->Names().size(), 3u);
  EXPECT_NEAR(voices->Style("ff_test", 3)[0], 0.3 + 0.003, 1e-6);
}

TEST(KokoroVoicesTest, ErrorsNameTheFile) {
  auto missing = KokoroVoices::Load("/nonexistent/voices-v1.0.bin");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/voices-v1.0.bin"), std::string::npos);
  auto not_zip = KokoroVoices::Load(testing::ModelPath("models/en_US-test-medium.onnx.json"));
  ASSERT_FALSE(not_zip.ok());
  EXPECT_NE(not_zip.status().message().find("NPZ"), std::string::npos);
}

TEST(NpyTest, RejectsWrongTypeAndShape) {
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 256), }";
  std::string npy =
      std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header;
  EXPECT_FALSE(ParseNpyStyles(npy, "x").ok());
  header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 128), }";
  npy = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header +
        std::string(2 * 128 * 4, '\0');
  EXPECT_FALSE(ParseNpyStyles(npy, "x").ok());
  header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1, 256), }";
  npy = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header +
        std::string(2 * 256 * 4, '\0');
  auto ok = ParseNpyStyles(npy, "x");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->size(), 512u);
}

}  // namespace
}  // namespace voxserve::engine::onnx
