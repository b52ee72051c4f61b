// KokoroVoice on the tiny Kokoro graphs: both export families, the voice and style row chosen,
// lengths that follow the graph, speed.
#include "engine/onnx/kokoro_voice.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "engine/engine_factory.h"
#include "test_models.h"

namespace voxserve::engine::onnx {
namespace {

using testing::KokoroSamples;
using testing::ModelPath;

std::unique_ptr<KokoroVoice> Load(const std::string& model, const std::string& voices) {
  KokoroEngineConfig config;
  config.model_id = "kokoro";
  config.model_path = ModelPath(model);
  config.voices_path = ModelPath(voices);
  auto voice = KokoroVoice::Create(config);
  EXPECT_TRUE(voice.ok()) << voice.status();
  return voice.ok() ? std::move(*voice) : nullptr;
}

audio::PcmAudio SynthesizeOk(KokoroVoice& voice, std::string_view text, std::string_view id,
                             double speed = 1.0) {
  SegmentInput input{text, id, speed};
  auto results = voice.Synthesize({&input, 1});
  EXPECT_TRUE(results[0].ok()) << results[0].status();
  return results[0].ok() ? *results[0] : audio::PcmAudio{};
}

float Peak(const std::vector<float>& samples) {
  float peak = 0;
  for (float s : samples) peak = std::max(peak, std::fabs(s));
  return peak;
}

TEST(KokoroVoiceTest, ListsTheVoicesOfTheVoicesFileAt24kHz) {
  auto voice = Load("models/kokoro-v1.0.onnx", "models/voices-v1.0.bin");
  ASSERT_TRUE(voice);
  const ModelInfo& info = voice->info();
  EXPECT_EQ(info.engine, "kokoro");
  EXPECT_EQ(info.max_batch_size, 1);
  ASSERT_EQ(info.voices.size(), 3u);
  EXPECT_EQ(info.voices[0].id, "af_test");
  EXPECT_EQ(info.voices[0].language, "en-us");
  EXPECT_EQ(info.voices[1].language, "en-gb");
  EXPECT_EQ(info.voices[2].language, "fr-fr");
  for (const VoiceInfo& v : info.voices) EXPECT_EQ(v.sample_rate, 24000);
}

TEST(KokoroVoiceTest, LengthFollowsTheGraphAndStyleRowFollowsTheTokenCount) {
  auto voice = Load("models/kokoro-v1.0.onnx", "models/voices-v1.0.bin");
  ASSERT_TRUE(voice);
  auto chunks = voice->TextToTokens("Hello world.", "bm_test");
  ASSERT_TRUE(chunks.ok());
  ASSERT_EQ(chunks->size(), 1u);
  const std::vector<int64_t>& tokens = (*chunks)[0];
  audio::PcmAudio pcm = SynthesizeOk(*voice, "Hello world.", "bm_test");
  EXPECT_EQ(pcm.sample_rate, 24000);
  EXPECT_EQ(pcm.samples.size(), KokoroSamples(tokens, 1.0));
  // The graph's amplitude is style[0]: voice 1 (bm_test), row = number of tokens.
  EXPECT_NEAR(Peak(pcm.samples), 0.2 + 0.001 * static_cast<double>(tokens.size()), 2e-4);
}

TEST(KokoroVoiceTest, SpeedShortensTheAudio) {
  auto voice = Load("models/kokoro-v1.0.onnx", "models/voices-v1.0.bin");
  ASSERT_TRUE(voice);
  auto chunks = voice->TextToTokens("Hello world.", "af_test");
  ASSERT_TRUE(chunks.ok());
  audio::PcmAudio fast = SynthesizeOk(*voice, "Hello world.", "af_test", 1.5);
  EXPECT_EQ(fast.samples.size(), KokoroSamples((*chunks)[0], 1.5));
  EXPECT_LT(fast.samples.size(), KokoroSamples((*chunks)[0], 1.0));
}

TEST(KokoroVoiceTest, SameInputTwiceGivesIdenticalAudio) {
  auto voice = Load("models/kokoro-v1.0.onnx", "models/voices-v1.0.bin");
  ASSERT_TRUE(voice);
  EXPECT_EQ(SynthesizeOk(*voice, "Twice, please.", "ff_test").samples,
            SynthesizeOk(*voice, "Twice, please.", "ff_test").samples);
}

TEST(KokoroVoiceTest, RunsTheOtherExportFamily) {
  // `tokens` input, int32 speed, vocab from config.json, voices/ folder of raw .bin files.
  auto voice = Load("kokoro_alt/model.onnx", "kokoro_alt/voices");
  ASSERT_TRUE(voice);
  auto chunks = voice->TextToTokens("Hello world.", "af_test");
  ASSERT_TRUE(chunks.ok());
  audio::PcmAudio pcm = SynthesizeOk(*voice, "Hello world.", "af_test", 2.0);
  EXPECT_EQ(pcm.samples.size(), KokoroSamples((*chunks)[0], 2.0));
}

TEST(KokoroVoiceTest, LongTextIsSynthesizedInChunksOfAtMost510Tokens) {
  auto voice = Load("models/kokoro-v1.0.onnx", "models/voices-v1.0.bin");
  ASSERT_TRUE(voice);
  std::string text;
  for (int i = 0; i < 40; ++i) text += "This clause keeps going, ";
  auto chunks = voice->TextToTokens(text, "af_test");
  ASSERT_TRUE(chunks.ok());
  ASSERT_GE(chunks->size(), 2u);
  size_t expected = 0;
  for (const auto& chunk : *chunks) {
    EXPECT_LE(chunk.size(), kKokoroMaxTokens);
    expected += KokoroSamples(chunk, 1.0);
  }
  EXPECT_EQ(SynthesizeOk(*voice, text, "af_test").samples.size(), expected);
}

TEST(KokoroVoiceTest, UnknownVoiceAndMissingFilesAreErrors) {
  auto voice = Load("models/kokoro-v1.0.onnx", "models/voices-v1.0.bin");
  ASSERT_TRUE(voice);
  SegmentInput input{"Hi.", "zz_nobody", 1.0};
  EXPECT_EQ(voice->Synthesize({&input, 1})[0].status().code(), absl::StatusCode::kNotFound);

  KokoroEngineConfig config;
  config.model_id = "k";
  config.model_path = ModelPath("models/kokoro-v1.0.onnx");
  config.voices_path = ModelPath("models/voices-v9.bin");
  auto missing_voices = KokoroVoice::Create(config);
  ASSERT_FALSE(missing_voices.ok());
  EXPECT_NE(missing_voices.status().message().find("voices-v9.bin"), std::string::npos);

  config.voices_path = ModelPath("models/voices-v1.0.bin");
  config.model_path = ModelPath("models/en_US-test-medium.onnx");
  auto piper_graph = KokoroVoice::Create(config);
  ASSERT_FALSE(piper_graph.ok());
  EXPECT_NE(piper_graph.status().message().find("is not a Kokoro graph"), std::string::npos);
}

// A graph without kokoro_config metadata (the other export family) in onnx-community's layout:
// the graph in onnx/, a transformers config.json without a vocabulary at the root. Without a
// tokenizer.json there the error names the config.json passed over and why; with one (model.vocab)
// the model loads.
TEST(KokoroVoiceTest, TheVocabularyIsFoundOneFolderUpAndWhatWasPassedOverIsNamed) {
  namespace fs = std::filesystem;
  const fs::path repo = fs::path(::testing::TempDir()) / "kokoro-onnx-community";
  fs::remove_all(repo);
  fs::create_directories(repo / "onnx");
  fs::copy_file(ModelPath("kokoro_alt/model.onnx"), repo / "onnx" / "model.onnx");
  std::ofstream(repo / "config.json") << R"({"model_type": "style_text_to_speech_2"})";
  KokoroEngineConfig config;
  config.model_id = "kokoro";
  config.model_path = (repo / "onnx" / "model.onnx").string();
  config.voices_path = ModelPath("kokoro_alt/voices");
  auto none = KokoroVoice::Create(config);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(none.status().message());
  EXPECT_NE(message.find("no config.json or tokenizer.json with a vocabulary"), std::string::npos)
      << message;
  EXPECT_NE(message.find((repo / "config.json").string() + ": has no \"vocab\" object"),
            std::string::npos)
      << message;

  // kokoro_alt's config.json holds the vocabulary as {"vocab": ...}; a tokenizer.json holds it
  // under "model", with the pad.
  std::ifstream alt(ModelPath("kokoro_alt/config.json"));
  const std::string vocab((std::istreambuf_iterator<char>(alt)), {});
  const size_t inner = vocab.find('{', 1);  // the vocab object: '{' ... '}' before the last '}'
  std::ofstream(repo / "tokenizer.json")
      << R"({"model": {"type": "WordLevel", "vocab": {"$": 0, )"
      << vocab.substr(inner + 1, vocab.rfind('}') - inner - 1) << "}}";
  auto found = KokoroVoice::Create(config);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_FALSE(SynthesizeOk(**found, "Hello world.", "af_test").samples.empty());
}

TEST(KokoroVoiceTest, FactoryNeedsModelAndVoices) {
  auto no_voices =
      CreateEngine({"k", "kokoro", "", {{"model", ModelPath("models/kokoro-v1.0.onnx")}}});
  ASSERT_FALSE(no_voices.ok());
  EXPECT_NE(no_voices.status().message().find("options.voices"), std::string::npos);
  auto engine = CreateEngine({"k",
                              "kokoro",
                              "bm_test",
                              {{"model", ModelPath("models/kokoro-v1.0.onnx")},
                               {"voices", ModelPath("models/voices-v1.0.bin")}}});
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_EQ((*engine)->info().default_voice, "bm_test");
}

}  // namespace
}  // namespace voxserve::engine::onnx

namespace voxserve::engine::onnx {
namespace {

TEST(KokoroVoiceTimingsTest, TheDurationOutputGivesExactWordTimingsInFrames) {
  auto voice = Load("models/kokoro-v1.0.onnx", "models/voices-v1.0.bin");
  ASSERT_TRUE(voice);
  const std::string text = "Hello brave world.";
  audio::PcmAudio pcm = SynthesizeOk(*voice, text, "af_test");
  EXPECT_EQ(pcm.timings, TimingsKind::kExact);
  ASSERT_EQ(pcm.words.size(), 3u);
  for (const WordTiming& word : pcm.words) {
    double start_frames = word.start_s * kKokoroSampleRate / testing::kKokoroFrame;
    EXPECT_NEAR(start_frames, std::round(start_frames), 1e-6);
  }
  EXPECT_LE(pcm.words[2].end_s, pcm.DurationSeconds() + 1e-9);
  EXPECT_GT(pcm.words[1].start_s, pcm.words[0].end_s);  // the space token between them
}

TEST(KokoroVoiceTimingsTest, WithoutADurationOutputWordsAreEstimated) {
  auto voice = Load("kokoro_alt/model.onnx", "kokoro_alt/voices");
  ASSERT_TRUE(voice);
  audio::PcmAudio pcm = SynthesizeOk(*voice, "Hello brave world.", "af_test");
  EXPECT_EQ(pcm.timings, TimingsKind::kEstimated);
  ASSERT_EQ(pcm.words.size(), 3u);
  EXPECT_LE(pcm.words[2].end_s, pcm.DurationSeconds() + 1e-9);
}

}  // namespace
}  // namespace voxserve::engine::onnx
