// PiperVoice on the tiny Piper graphs: lengths follow the graph, speakers feed `sid`, batches
// equal single runs, broken files give errors that name them.
#include "engine/onnx/piper_voice.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "engine/engine_factory.h"
#include "test_models.h"

namespace voxserve::engine::onnx {
namespace {

using testing::ModelPath;
using testing::PiperSamples;

constexpr size_t kSilence = testing::kPiperRate / 5;  // 0.2 s after each sentence

std::unique_ptr<PiperVoice> Load(const std::string& relative, const std::string& id = "voice",
                                 std::map<std::string, std::string> options = {}) {
  PiperEngineConfig config;
  config.model_id = id;
  config.model_path = ModelPath(relative);
  for (const auto& [key, value] : options) EXPECT_TRUE(config.Set(key, value).ok()) << key;
  auto voice = PiperVoice::Create(config);
  EXPECT_TRUE(voice.ok()) << voice.status();
  return voice.ok() ? std::move(*voice) : nullptr;
}

audio::PcmAudio SynthesizeOk(PiperVoice& voice, std::string_view text, std::string_view id,
                             double speed = 1.0) {
  SegmentInput input{text, id, speed};
  auto results = voice.Synthesize({&input, 1});
  EXPECT_TRUE(results[0].ok()) << results[0].status();
  return results[0].ok() ? *results[0] : audio::PcmAudio{};
}

TEST(PiperVoiceTest, ListsOneVoiceForASingleSpeakerFile) {
  auto voice = Load("models/en_US-test-medium.onnx", "en_US-test-medium");
  ASSERT_TRUE(voice);
  const ModelInfo& info = voice->info();
  EXPECT_EQ(info.engine, "piper");
  ASSERT_EQ(info.voices.size(), 1u);
  EXPECT_EQ(info.voices[0].id, "en_US-test-medium");
  EXPECT_EQ(info.voices[0].language, "en-us");
  EXPECT_EQ(info.voices[0].sample_rate, testing::kPiperRate);
  EXPECT_EQ(info.max_batch_size, 1);  // no durations output: Piper cannot cut a padded batch
}

TEST(PiperVoiceTest, LengthFollowsTheGraph) {
  auto voice = Load("models/en_US-test-medium.onnx");
  ASSERT_TRUE(voice);
  auto ids = voice->TextToIds("Hello world.");
  ASSERT_TRUE(ids.ok());
  ASSERT_EQ(ids->size(), 1u);
  audio::PcmAudio pcm = SynthesizeOk(*voice, "Hello world.", "voice");
  EXPECT_EQ(pcm.sample_rate, testing::kPiperRate);
  EXPECT_EQ(pcm.samples.size(), PiperSamples((*ids)[0], 1.0f) + kSilence);
  // Peak-normalized as Piper's Python does; the sentence silence is zeros.
  float peak = 0;
  for (float s : pcm.samples) peak = std::max(peak, std::fabs(s));
  EXPECT_NEAR(peak, 1.0f, 1e-3f);
  EXPECT_EQ(pcm.samples.back(), 0.0f);
}

TEST(PiperVoiceTest, SpeedBecomesLengthScale) {
  auto voice = Load("models/en_US-test-medium.onnx");
  ASSERT_TRUE(voice);
  auto ids = voice->TextToIds("Hello world.");
  ASSERT_TRUE(ids.ok());
  audio::PcmAudio slow = SynthesizeOk(*voice, "Hello world.", "voice", 0.5);
  audio::PcmAudio fast = SynthesizeOk(*voice, "Hello world.", "voice", 2.0);
  EXPECT_EQ(slow.samples.size(), PiperSamples((*ids)[0], 2.0f) + kSilence);
  EXPECT_EQ(fast.samples.size(), PiperSamples((*ids)[0], 0.5f) + kSilence);
}

TEST(PiperVoiceTest, EverySentenceIsFollowedBySilence) {
  auto voice = Load("models/en_US-test-medium.onnx", "voice", {{"sentence_silence", "0.5"}});
  ASSERT_TRUE(voice);
  auto ids = voice->TextToIds("Hi. Bye!");
  ASSERT_TRUE(ids.ok());
  ASSERT_EQ(ids->size(), 2u);
  audio::PcmAudio pcm = SynthesizeOk(*voice, "Hi. Bye!", "voice");
  EXPECT_EQ(pcm.samples.size(), PiperSamples((*ids)[0], 1.0f) + PiperSamples((*ids)[1], 1.0f) +
                                    2 * testing::kPiperRate / 2);
}

// The arena mode changes where ORT's tensors live, never what a Run computes; each mode (and the
// true/false spellings of before) loads, and a long sentence between two short ones leaves the
// short ones' audio as it was.
TEST(PiperVoiceTest, EveryArenaModeGivesTheSameAudio) {
  auto reference = Load("models/en_US-test-medium.onnx", "voice", {{"cpu_memory_arena", "off"}});
  ASSERT_NE(reference, nullptr);
  const std::string long_text(400, 'a');
  const audio::PcmAudio expected = SynthesizeOk(*reference, "Hello there.", "voice");
  for (const char* mode : {"on", "shrink", "true", "false"}) {
    auto voice = Load("models/en_US-test-medium.onnx", "voice", {{"cpu_memory_arena", mode}});
    ASSERT_NE(voice, nullptr) << mode;
    EXPECT_EQ(SynthesizeOk(*voice, "Hello there.", "voice").samples, expected.samples) << mode;
    SynthesizeOk(*voice, long_text, "voice");
    EXPECT_EQ(SynthesizeOk(*voice, "Hello there.", "voice").samples, expected.samples) << mode;
  }
}

TEST(PiperVoiceTest, AnUnknownArenaModeIsRefusedByName) {
  PiperEngineConfig config;
  config.model_id = "voice";
  config.model_path = ModelPath("models/en_US-test-medium.onnx");
  ASSERT_TRUE(config.Set("cpu_memory_arena", "sometimes").ok());
  auto voice = PiperVoice::Create(config);
  ASSERT_FALSE(voice.ok());
  EXPECT_EQ(voice.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(voice.status().message().find("cpu_memory_arena: 'sometimes' is not one of: off on "
                                          "shrink"),
            std::string::npos)
      << voice.status();
}

TEST(PiperVoiceTest, SpeakersAreVoicesAndSelectTheSid) {
  auto voice = Load("models/en_US-multi-medium.onnx", "multi");
  ASSERT_TRUE(voice);
  std::vector<std::string> ids;
  for (const VoiceInfo& v : voice->info().voices) ids.push_back(v.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"multi:alice", "multi:bob", "multi:carol"}));
  EXPECT_EQ(voice->info().default_voice, "multi:alice");
  EXPECT_FALSE(voice->AcceptsVoice("multi"));
  EXPECT_FALSE(voice->AcceptsVoice("multi:dave"));
  auto sentence = voice->TextToIds("Hello.");
  ASSERT_TRUE(sentence.ok());
  // The test graph adds sid frames: carol (sid 2) is two hops longer than alice (sid 0).
  for (int64_t sid = 0; sid < 3; ++sid) {
    audio::PcmAudio pcm = SynthesizeOk(*voice, "Hello.", ids[static_cast<size_t>(sid)]);
    EXPECT_EQ(pcm.samples.size(), PiperSamples((*sentence)[0], 1.0f, sid) + kSilence) << sid;
  }
}

TEST(PiperVoiceTest, SameInputTwiceGivesIdenticalAudio) {
  auto voice = Load("models/en_US-test-medium.onnx");
  ASSERT_TRUE(voice);
  audio::PcmAudio first = SynthesizeOk(*voice, "Same words, same sound.", "voice");
  audio::PcmAudio second = SynthesizeOk(*voice, "Same words, same sound.", "voice");
  EXPECT_EQ(first.samples, second.samples);
}

TEST(PiperVoiceTest, BatchOfNEqualsNSingleRuns) {
  auto voice = Load("batch/en_US-batch-medium.onnx", "voice", {{"max_batch_size", "4"}});
  ASSERT_TRUE(voice);
  EXPECT_EQ(voice->info().max_batch_size, 4);  // durations output: items can be cut apart
  std::vector<std::string> texts = {"Hi.", "A much longer sentence than the first one.",
                                    "Medium length here.", "Ok!", "Fifth, in a second run."};
  std::vector<SegmentInput> batch;
  for (const std::string& text : texts) batch.push_back({text, "voice", 1.0});
  auto together = voice->Synthesize(batch);
  ASSERT_EQ(together.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    ASSERT_TRUE(together[i].ok()) << together[i].status();
    audio::PcmAudio alone = SynthesizeOk(*voice, texts[i], "voice");
    EXPECT_EQ(together[i]->samples, alone.samples) << texts[i];
    auto ids = voice->TextToIds(texts[i]);
    ASSERT_TRUE(ids.ok());
    EXPECT_EQ(alone.samples.size(), PiperSamples((*ids)[0], 1.0f) + kSilence) << texts[i];
  }
}

TEST(PiperVoiceTest, BatchWithDifferentSpeedsRunsEachSpeedApart) {
  auto voice = Load("batch/en_US-batch-medium.onnx", "voice");
  ASSERT_TRUE(voice);
  std::vector<SegmentInput> batch = {{"Hello.", "voice", 1.0}, {"Hello.", "voice", 2.0}};
  auto results = voice->Synthesize(batch);
  ASSERT_TRUE(results[0].ok() && results[1].ok());
  EXPECT_GT(results[0]->samples.size(), results[1]->samples.size());
}

TEST(PiperVoiceTest, MissingModelFileIsAnErrorNamingIt) {
  PiperEngineConfig config;
  config.model_id = "missing";
  config.model_path = ModelPath("models/does-not-exist.onnx");
  config.config_path = ModelPath("models/en_US-test-medium.onnx.json");
  auto voice = PiperVoice::Create(config);
  ASSERT_FALSE(voice.ok());
  EXPECT_NE(voice.status().message().find("does-not-exist.onnx does not exist"), std::string::npos)
      << voice.status();
}

TEST(PiperVoiceTest, CorruptedModelFileIsAnErrorNamingIt) {
  std::string dir = ::testing::TempDir() + "/corrupt_piper";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(ModelPath("models/en_US-test-medium.onnx.json"),
                             dir + "/broken.onnx.json",
                             std::filesystem::copy_options::overwrite_existing);
  std::ofstream(dir + "/broken.onnx") << "this is not a protobuf";
  PiperEngineConfig config;
  config.model_id = "broken";
  config.model_path = dir + "/broken.onnx";
  auto voice = PiperVoice::Create(config);
  ASSERT_FALSE(voice.ok());
  EXPECT_NE(voice.status().message().find("cannot load model " + dir + "/broken.onnx"),
            std::string::npos)
      << voice.status();
}

TEST(PiperVoiceTest, AKokoroGraphIsNotAPiperVoice) {
  PiperEngineConfig config;
  config.model_id = "wrong";
  config.model_path = ModelPath("models/kokoro-v1.0.onnx");
  config.config_path = ModelPath("models/en_US-test-medium.onnx.json");
  auto voice = PiperVoice::Create(config);
  ASSERT_FALSE(voice.ok());
  EXPECT_NE(voice.status().message().find("is not a Piper voice"), std::string::npos);
}

TEST(PiperVoiceTest, CudaWithoutTheCudaProviderIsAClearError) {
  PiperEngineConfig config;
  config.model_id = "gpu";
  config.model_path = ModelPath("models/en_US-test-medium.onnx");
  ASSERT_TRUE(config.Set("execution_provider", "cuda").ok());
  auto voice = PiperVoice::Create(config);
  ASSERT_FALSE(voice.ok());
  EXPECT_NE(voice.status().message().find("no CUDA execution provider"), std::string::npos)
      << voice.status();
}

TEST(PiperVoiceTest, WritesTheOptimizedGraphWhereConfiguredAndLoadsIt) {
  std::string optimized = ::testing::TempDir() + "/piper_optimized.onnx";
  std::filesystem::remove(optimized);
  auto first = Load("models/en_US-test-medium.onnx", "voice",
                    {{"optimized_model_path", optimized}, {"graph_optimization", "extended"}});
  ASSERT_TRUE(first);
  ASSERT_TRUE(std::filesystem::exists(optimized));
  // The cached graph loads with optimization off and speaks the same.
  PiperEngineConfig config;
  config.model_id = "voice";
  config.model_path = optimized;
  config.config_path = ModelPath("models/en_US-test-medium.onnx.json");
  ASSERT_TRUE(config.Set("graph_optimization", "disable").ok());
  auto cached = PiperVoice::Create(config);
  ASSERT_TRUE(cached.ok()) << cached.status();
  EXPECT_EQ(SynthesizeOk(**cached, "Hello.", "voice").samples,
            SynthesizeOk(*first, "Hello.", "voice").samples);
}

TEST(PiperVoiceTest, FactoryBuildsPiperFromOptionsAndRejectsUnknownOnes) {
  EngineSpec spec{"p",
                  "piper",
                  "",
                  {{"model", ModelPath("models/en_US-test-medium.onnx")},
                   {"intra_op_threads", "1"},
                   {"graph_optimization", "basic"}}};
  auto engine = CreateEngine(spec);
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_EQ((*engine)->info().voices[0].id, "p");
  spec.options["colour"] = "blue";
  auto bad = CreateEngine(spec);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown piper option 'colour'"), std::string::npos);
  spec.options.erase("colour");
  spec.options["graph_optimization"] = "maximum";
  auto bad_level = CreateEngine(spec);
  ASSERT_FALSE(bad_level.ok());
  EXPECT_NE(bad_level.status().message().find("graph_optimization"), std::string::npos);
}

}  // namespace
}  // namespace voxserve::engine::onnx

namespace voxserve::engine::onnx {
namespace {

// Word timings: exact from the alignment output's frames (the "batch" graph has it), estimated
// by phoneme counts without it.
TEST(PiperVoiceTimingsTest, TheDurationsOutputGivesExactWordTimingsFromItsFrames) {
  auto voice = Load("batch/en_US-batch-medium.onnx", "voice");
  ASSERT_TRUE(voice);
  const std::string text = "Hello brave world.";
  audio::PcmAudio pcm = SynthesizeOk(*voice, text, "voice");
  EXPECT_EQ(pcm.timings, TimingsKind::kExact);
  ASSERT_EQ(pcm.words.size(), 3u);
  EXPECT_EQ(text.substr(pcm.words[2].text_begin, pcm.words[2].text_end - pcm.words[2].text_begin),
            "world");
  // The graph's frames are whole numbers of hops: every boundary falls on one.
  for (const WordTiming& word : pcm.words) {
    double start_hops = word.start_s * testing::kPiperRate / testing::kPiperHop;
    EXPECT_NEAR(start_hops, std::round(start_hops), 1e-6);
    EXPECT_LT(word.start_s, word.end_s);
  }
  EXPECT_LE(pcm.words[2].end_s, pcm.DurationSeconds() - 0.2 + 1e-9);  // before the silence
  audio::PcmAudio slow = SynthesizeOk(*voice, text, "voice", 0.5);
  ASSERT_EQ(slow.words.size(), 3u);
  EXPECT_NEAR(slow.words[2].start_s, 2 * pcm.words[2].start_s, 0.05);
}

TEST(PiperVoiceTimingsTest, WithoutDurationsWordsAreEstimatedFromPhonemeCounts) {
  auto voice = Load("models/en_US-test-medium.onnx", "voice");
  ASSERT_TRUE(voice);
  audio::PcmAudio pcm = SynthesizeOk(*voice, "Hello brave world. Second sentence.", "voice");
  EXPECT_EQ(pcm.timings, TimingsKind::kEstimated);
  ASSERT_EQ(pcm.words.size(), 5u);
  for (size_t i = 1; i < pcm.words.size(); ++i) {
    EXPECT_GE(pcm.words[i].start_s, pcm.words[i - 1].end_s);
  }
  // The second sentence starts after the first one's 0.2 s of silence.
  EXPECT_GE(pcm.words[3].start_s - pcm.words[2].end_s, 0.2);
  EXPECT_LE(pcm.words[4].end_s, pcm.DurationSeconds());
}

}  // namespace
}  // namespace voxserve::engine::onnx
