// CosyVoiceEngine's step runner on the tiny random-weight bundle: a cloned voice's profile in,
// 24 kHz audio of 480 samples per mel frame (2 frames per speech token) out, reproducibly, the
// same alone and batched, and segments that leave midway.
#include "engine/cosyvoice/cosyvoice_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <limits>
#include <map>

#include "core/error.h"
#include "engine/cosyvoice/cosyvoice_engine.h"
#include "engine/cosyvoice/flow_matcher.h"
#include "unit/engine/cosyvoice_bundle/tiny_bundle.h"

namespace voxserve::engine::cosyvoice {
namespace {

using ::testing::HasSubstr;
using testing::TinyBundle;

constexpr int64_t kStopToken = 6562;      // one of 6561-6563: ends a piece at once (llm.py:544)
constexpr size_t kSamplesPerToken = 960;  // 2 mel frames per token x 480 samples per frame

struct Fixture {
  std::unique_ptr<CosyVoiceEngine> engine;
  std::shared_ptr<const VoiceProfile> profile;
};

Fixture Load(bool streaming = false, int llm_capacity = CosyVoiceEngineConfig{}.llm_capacity,
             int first_hop = 0, int max_hop = 0, const std::string& warmup_synthesis = "auto") {
  Fixture f;
  CosyVoiceEngineConfig config;
  config.warmup_synthesis = warmup_synthesis;
  config.model_id = "cv";
  config.bundle_path = TinyBundle();
  config.streaming = streaming;
  config.llm_capacity = llm_capacity;
  config.stream_first_hop = first_hop;
  config.stream_max_hop = max_hop;
  auto engine = CosyVoiceEngine::Create(config);
  EXPECT_TRUE(engine.ok()) << engine.status();
  if (!engine.ok()) return f;
  f.engine = std::move(*engine);
  std::ifstream in(TinyBundle() + "/goldens/prompt.wav", std::ios::binary);
  std::vector<uint8_t> wav((std::istreambuf_iterator<char>(in)), {});
  auto profile = f.engine->CloneVoice({wav, "This is a short prompt recording."});
  EXPECT_TRUE(profile.ok()) << profile.status();
  if (profile.ok()) f.profile = std::make_shared<const VoiceProfile>(*std::move(profile));
  return f;
}

// A runner whose LLM stops every piece after `tokens` tokens (a logp hook forcing the stop id),
// so the audio length is known.
std::unique_ptr<CosyVoiceRunner> StoppingRunner(CosyVoiceEngine& engine, int tokens) {
  auto runner = engine.CreateRunner();
  EXPECT_TRUE(runner.ok()) << runner.status();
  if (!runner.ok()) return nullptr;
  std::unique_ptr<CosyVoiceRunner> cv(dynamic_cast<CosyVoiceRunner*>(runner->release()));
  auto seen = std::make_shared<std::map<uint64_t, int>>();
  cv->decoder().SetLogpHook([seen, tokens](uint64_t id, std::span<float> logp) {
    if (++(*seen)[id] <= tokens) {  // no stop id before then, whatever the random weights say
      for (int64_t stop = 6561; stop <= 6563; ++stop) {
        logp[stop] = -std::numeric_limits<float>::infinity();
      }
      return;
    }
    for (float& value : logp) value = -std::numeric_limits<float>::infinity();
    logp[kStopToken] = 0;
  });
  return cv;
}

// Steps until every begun sequence ended; the chunks joined per id, and each id's end.
struct Outcome {
  std::map<SequenceId, std::vector<float>> audio;
  std::map<SequenceId, std::vector<size_t>> chunks;  // sizes of the non-empty chunks
  std::map<SequenceId, absl::Status> ends;
};
Outcome RunToEnd(StreamRunner& runner) {
  Outcome out;
  for (int guard = 0; runner.Active() > 0 && guard < 10000; ++guard) {
    for (SequenceStep& step : runner.Step()) {
      EXPECT_FALSE(out.ends.contains(step.id)) << "output after the end of " << step.id;
      if (!step.chunk.samples.empty()) {
        EXPECT_EQ(step.chunk.sample_rate, 24000);
        out.chunks[step.id].push_back(step.chunk.samples.size());
      }
      auto& audio = out.audio[step.id];
      audio.insert(audio.end(), step.chunk.samples.begin(), step.chunk.samples.end());
      if (step.end) out.ends[step.id] = *step.end;
    }
  }
  EXPECT_EQ(runner.Active(), 0u);
  return out;
}

TEST(CosyVoiceRunner, SpeaksAClonedVoiceAt24kHzWith960SamplesPerToken) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  Fixture f = Load();
  ASSERT_TRUE(f.profile);
  auto runner = StoppingRunner(*f.engine, 7);
  ASSERT_TRUE(runner);
  ASSERT_TRUE(runner->Begin(1, {"Hello world.", "v", 1.0, f.profile}).ok());
  Outcome out = RunToEnd(*runner);
  ASSERT_TRUE(out.ends.at(1).ok()) << out.ends.at(1);
  EXPECT_EQ(out.audio.at(1).size(), 7 * kSamplesPerToken);
  float peak = 0;
  for (float s : out.audio.at(1)) peak = std::max(peak, std::abs(s));
  EXPECT_GT(peak, 0.0f);
  EXPECT_LE(peak, 0.99f);  // HiFT's audio_limit
}

TEST(CosyVoiceRunner, SameInputSameAudioAloneOrBatchedAndReleaseStopsOneSegment) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  Fixture f = Load();
  ASSERT_TRUE(f.profile);
  // Sampled (RAS) tokens up to max_len or a sampled stop: the engine's own schedule.
  auto alone =
      f.engine->Synthesize(std::vector<SegmentInput>{{"Good morning.", "v", 1.0, f.profile}});
  ASSERT_TRUE(alone[0].ok()) << alone[0].status();
  ASSERT_FALSE(alone[0]->samples.empty());
  EXPECT_EQ(alone[0]->samples.size() % kSamplesPerToken, 0u);

  auto runner = f.engine->CreateRunner();
  ASSERT_TRUE(runner.ok());
  ASSERT_TRUE((*runner)->Begin(1, {"Hello there.", "v", 1.0, f.profile}).ok());
  ASSERT_TRUE((*runner)->Begin(2, {"Good morning.", "v", 1.0, f.profile}).ok());
  (*runner)->Step();
  ASSERT_TRUE((*runner)->Begin(3, {"Good morning.", "v", 1.0, f.profile}).ok());  // joins late
  (*runner)->Step();
  (*runner)->Release(1);
  EXPECT_EQ((*runner)->Active(), 2u);
  Outcome out = RunToEnd(**runner);
  EXPECT_FALSE(out.ends.contains(1));
  ASSERT_TRUE(out.ends.at(2).ok() && out.ends.at(3).ok());
  EXPECT_EQ(out.audio.at(2), alone[0]->samples);
  EXPECT_EQ(out.audio.at(3), alone[0]->samples);
}

// The figures the metrics read (StreamRunnerStats): prefills waiting, LLM rows decoding, tokens
// made and vocoder jobs, all back to idle at the end.
TEST(CosyVoiceRunner, StatsFollowPrefillDecodingTokensAndVocoderJobs) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  Fixture f = Load();
  ASSERT_TRUE(f.profile);
  auto runner = StoppingRunner(*f.engine, 7);
  ASSERT_TRUE(runner);
  ASSERT_TRUE(runner->Begin(1, {"Hello world.", "v", 1.0, f.profile}).ok());
  ASSERT_TRUE(runner->Begin(2, {"Good morning.", "v", 1.0, f.profile}).ok());
  StreamRunnerStats begun = runner->Stats();
  EXPECT_EQ(begun.prefill_waiting, 2u);  // one prefill per step (max_prefills_per_step 1)
  EXPECT_EQ(begun.decoding, 0u);
  runner->Step();
  runner->Step();
  StreamRunnerStats stepped = runner->Stats();
  EXPECT_EQ(stepped.prefill_waiting, 0u);
  EXPECT_EQ(stepped.decoding, 2u);
  EXPECT_GT(stepped.tokens_total, 0u);
  Outcome out = RunToEnd(*runner);
  ASSERT_TRUE(out.ends.at(1).ok() && out.ends.at(2).ok());
  StreamRunnerStats done = runner->Stats();
  EXPECT_EQ(done.tokens_total, 14u);       // 7 each; the stop token is not one
  EXPECT_EQ(done.vocoder_jobs_total, 2u);  // one piece each
  EXPECT_GE(done.vocoder_batched_total, 2u);
  EXPECT_LE(done.vocoder_batched_total, 4u);
  EXPECT_EQ(done.decoding, 0u);
  EXPECT_EQ(done.prefill_waiting, 0u);
  EXPECT_EQ(done.vocoder_pending, 0u);
}

// Warm-up runs every stage before the model is ready: a voice cloned from the synthetic prompt,
// then (warmup_synthesis on, as auto is on CUDA) each text by max_active segments at once (the
// flow ran); on the CPU by default only the clone; no texts, nothing runs.
TEST(CosyVoiceRunner, WarmupSpeaksEachTextByMaxActiveSegmentsWithASyntheticVoice) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  Fixture cpu = Load();
  ASSERT_TRUE(cpu.engine);
  const auto cpu_calls = cpu.engine->flow().estimator_calls();
  ASSERT_TRUE(cpu.engine->Warmup(std::vector<std::string>{"Hello."}).ok());
  EXPECT_EQ(cpu.engine->last_warmup().segments, 0);  // auto on the CPU: no synthesis
  EXPECT_EQ(cpu.engine->flow().estimator_calls(), cpu_calls);

  Fixture f = Load(false, CosyVoiceEngineConfig{}.llm_capacity, 0, 0, "on");
  ASSERT_TRUE(f.engine);
  const auto calls_before = f.engine->flow().estimator_calls();
  ASSERT_TRUE(f.engine->Warmup(std::vector<std::string>{}).ok());
  EXPECT_EQ(f.engine->flow().estimator_calls(), calls_before);
  EXPECT_EQ(f.engine->last_warmup().segments, 0);

  absl::Status warmed = f.engine->Warmup(std::vector<std::string>{"Hello.", "Good morning."});
  ASSERT_TRUE(warmed.ok()) << warmed;
  const WarmupReport& report = f.engine->last_warmup();
  EXPECT_EQ(report.segments, 2 * f.engine->max_active());
  EXPECT_GT(report.audio_seconds, 0);
  EXPECT_GT(f.engine->flow().estimator_calls(), calls_before);
}

TEST(CosyVoiceRunner, RefusesSegmentsWithoutAProfileOfItsFamily) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  Fixture f = Load();
  ASSERT_TRUE(f.profile);
  auto runner = f.engine->CreateRunner();
  ASSERT_TRUE(runner.ok());
  absl::Status none = (*runner)->Begin(1, {"Hello.", "v", 1.0, nullptr});
  EXPECT_TRUE(absl::IsInvalidArgument(none));
  EXPECT_THAT(std::string(none.message()), HasSubstr("cloned voices only"));
  auto other = std::make_shared<VoiceProfile>(*f.profile);
  other->family = "test";
  EXPECT_TRUE(absl::IsInvalidArgument((*runner)->Begin(2, {"Hello.", "v", 1.0, other})));
  auto broken = std::make_shared<VoiceProfile>(*f.profile);
  broken->tensors.erase("prompt_mel");
  absl::Status missing = (*runner)->Begin(3, {"Hello.", "v", 1.0, broken});
  EXPECT_THAT(std::string(missing.message()), HasSubstr("'prompt_mel'"));
  absl::Status nothing = (*runner)->Begin(4, {"...", "v", 1.0, f.profile});
  EXPECT_TRUE(absl::IsInvalidArgument(nothing));
  EXPECT_EQ(core::DetailOf(nothing).code, "empty_input");  // as the service's own check says
  EXPECT_EQ((*runner)->Active(), 0u);
}

TEST(CosyVoiceRunner, SpeedChangesTheMelLength) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  Fixture f = Load();
  ASSERT_TRUE(f.profile);
  auto runner = StoppingRunner(*f.engine, 10);
  ASSERT_TRUE(runner);
  ASSERT_TRUE(runner->Begin(1, {"Hello world.", "v", 2.0, f.profile}).ok());
  Outcome out = RunToEnd(*runner);
  ASSERT_TRUE(out.ends.at(1).ok()) << out.ends.at(1);
  // 10 tokens = 20 frames; F.interpolate to int(20 / 2) = 10 frames of 480 samples.
  EXPECT_EQ(out.audio.at(1).size(), 10u * 480u);
}

TEST(CosyVoiceRunner, StreamingEmitsTheFirstHopEarlyAndTheSameLengthInAll) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  Fixture f = Load(/*streaming=*/true);
  ASSERT_TRUE(f.profile);
  auto runner = StoppingRunner(*f.engine, 60);
  ASSERT_TRUE(runner);
  ASSERT_TRUE(runner->Begin(1, {"Hello world.", "v", 1.0, f.profile}).ok());
  Outcome out = RunToEnd(*runner);
  ASSERT_TRUE(out.ends.at(1).ok()) << out.ends.at(1);
  EXPECT_EQ(out.audio.at(1).size(), 60 * kSamplesPerToken);
  // The first hop is 25 tokens padded so prompt + hop is whole hops (model.py:345-348); HiFT
  // holds back its last 3840 samples for the cross-fade. The next hop (50 + 3 lookahead) does
  // not fit in 60 tokens, so the rest comes with the final chunk.
  const size_t prompt = f.profile->tensors.at("prompt_speech_tokens").ints.size();
  const size_t first_hop = 25 + ((prompt + 24) / 25 * 25 - prompt);
  ASSERT_EQ(out.chunks.at(1).size(), 2u);
  EXPECT_EQ(out.chunks.at(1)[0], first_hop * kSamplesPerToken - 3840);
}

// Every hop of a long piece falls where upstream's schedule puts it (model.py:340-360): the
// first is 25 tokens padded to a whole number of hops with the prompt, then 50, then 100 (the
// cap), each emitted once its hop plus 3 lookahead tokens exist; the final chunk holds the rest.
// As long as the tiny bundle's flow encoder allows (its max_tokens, prompt included: the runner
// ends a piece there, as it ends one at max_len).
TEST(CosyVoiceRunner, StreamingHopsFollowUpstreamsScheduleToTheEnd) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  Fixture f = Load(/*streaming=*/true);
  ASSERT_TRUE(f.profile);
  const size_t prompt = f.profile->tensors.at("prompt_speech_tokens").ints.size();
  auto flow = FlowMatcher::Create(f.engine->manifest(), TinyBundle(), {});
  ASSERT_TRUE(flow.ok()) << flow.status();
  const int64_t max_tokens = (*flow)->max_tokens();
  ASSERT_GT(max_tokens, static_cast<int64_t>(prompt + 200));
  const size_t tokens = static_cast<size_t>(max_tokens) - prompt - 1;
  auto runner = StoppingRunner(*f.engine, static_cast<int>(tokens));
  ASSERT_TRUE(runner);
  // One piece (no inner punctuation), long enough that max_len (20 x its tokens) is no limit.
  ASSERT_TRUE(runner->Begin(1, {"Hello world and all who live on it.", "v", 1.0, f.profile}).ok());
  Outcome out = RunToEnd(*runner);
  ASSERT_TRUE(out.ends.at(1).ok()) << out.ends.at(1);
  EXPECT_EQ(out.audio.at(1).size(), tokens * kSamplesPerToken);
  std::vector<size_t> expected;
  size_t offset = 0, hop = 25;
  for (;;) {
    size_t this_hop = offset == 0 ? hop + ((prompt + 24) / 25 * 25 - prompt) : hop;
    if (offset + this_hop + 3 > tokens) break;
    // HiFT holds back 3840 samples for the cross-fade once, in the first chunk.
    expected.push_back(this_hop * kSamplesPerToken - (offset == 0 ? 3840 : 0));
    offset += this_hop;
    hop = std::min<size_t>(100, hop * 2);
  }
  ASSERT_GE(expected.size(), 3u) << "25 + pad, 50, 100: up to the cap";
  const std::vector<size_t>& chunks = out.chunks.at(1);
  ASSERT_EQ(chunks.size(), expected.size() + 1) << "one final chunk after the hops";
  EXPECT_EQ(std::vector<size_t>(chunks.begin(), chunks.end() - 1), expected);
  EXPECT_EQ(chunks.back(), (tokens - offset) * kSamplesPerToken + 3840);
}

// A schedule of one's own (stream_first_hop, stream_max_hop): the first hop as asked, unpadded,
// then hops growing x2 from it to the bound; the audio is as long as upstream's schedule makes.
TEST(CosyVoiceRunner, AFirstHopOfOnesOwnComesUnpaddedAndTheHopsGrowFromIt) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  Fixture f = Load(/*streaming=*/true, CosyVoiceEngineConfig{}.llm_capacity, /*first_hop=*/15,
                   /*max_hop=*/60);
  ASSERT_TRUE(f.profile);
  const size_t tokens = 200;
  auto runner = StoppingRunner(*f.engine, static_cast<int>(tokens));
  ASSERT_TRUE(runner);
  ASSERT_TRUE(runner->Begin(1, {"Hello world and all who live on it.", "v", 1.0, f.profile}).ok());
  Outcome out = RunToEnd(*runner);
  ASSERT_TRUE(out.ends.at(1).ok()) << out.ends.at(1);
  EXPECT_EQ(out.audio.at(1).size(), tokens * kSamplesPerToken);
  // 15, 30, 60, 60 (the bound): 165 tokens; 60 more + 3 lookahead do not fit in 200.
  const std::vector<size_t> hops = {15, 30, 60, 60};
  std::vector<size_t> expected;
  for (size_t k = 0; k < hops.size(); ++k) {
    expected.push_back(hops[k] * kSamplesPerToken - (k == 0 ? 3840 : 0));
  }
  expected.push_back((tokens - 165) * kSamplesPerToken + 3840);
  EXPECT_EQ(out.chunks.at(1), expected);
}

TEST(CosyVoiceRunner, AFirstHopHiftCannotFillIsRefusedAtLoad) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  CosyVoiceEngineConfig config;
  config.model_id = "cv";
  config.bundle_path = TinyBundle();
  config.streaming = true;
  config.stream_first_hop = 4;  // 8 mel frames: all of them held back by HiFT
  auto engine = CosyVoiceEngine::Create(config);
  ASSERT_FALSE(engine.ok());
  EXPECT_THAT(std::string(engine.status().message()), HasSubstr("stream_first_hop"));
  config.stream_first_hop = 30;
  config.stream_max_hop = 20;
  EXPECT_FALSE(CosyVoiceEngine::Create(config).ok());
}

TEST(CosyVoiceRunner, InstructModeNeedsInstructionsWithinTheTokenBound) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  Fixture f = Load();
  ASSERT_TRUE(f.profile);
  auto runner = f.engine->CreateRunner();
  ASSERT_TRUE(runner.ok());
  SegmentInput input{"Hello.", "v", 1.0, f.profile};
  input.voice_mode = VoiceMode::kInstruct;
  absl::Status none = (*runner)->Begin(1, input);
  EXPECT_TRUE(absl::IsInvalidArgument(none)) << none;
  EXPECT_EQ(core::DetailOf(none).param, "instructions");
  // The tiny bundle's tokenizer spends about a token per byte: 420 bytes are past 256 tokens.
  std::string long_instructions;
  for (int i = 0; i < 30; ++i) long_instructions += "Speak slowly. ";
  input.instructions = long_instructions;
  absl::Status too_long = (*runner)->Begin(2, input);
  EXPECT_TRUE(absl::IsInvalidArgument(too_long)) << too_long;
  EXPECT_EQ(core::DetailOf(too_long).code, "instructions_too_long");
  EXPECT_EQ((*runner)->Active(), 0u);
  input.instructions = "Speak cheerfully.";
  EXPECT_TRUE((*runner)->Begin(3, input).ok());
  EXPECT_EQ((*runner)->Active(), 1u);
  (*runner)->Release(3);
}

// Issue 29: with the default llm_capacity a sentence of ~95 characters or more (the tiny
// bundle's tokenizer spends about a token per byte) did not fit beside the prompt with the 20
// tokens per text token it may generate, and was refused. It is spoken in more pieces instead.
TEST(CosyVoiceRunner, ASentenceTooLongForTheLlmsCapacityIsSpokenInSeveralPieces) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  Fixture f = Load();
  ASSERT_TRUE(f.profile);
  auto runner = StoppingRunner(*f.engine, 3);
  ASSERT_TRUE(runner);
  const std::string sentence =
      "This one sentence runs on for well over a hundred and fifty characters, with commas in "
      "it and many words, so that it cannot fit the cache beside the prompt in one piece.";
  ASSERT_GT(sentence.size(), 150u);
  ASSERT_TRUE(runner->Begin(1, {sentence, "v", 1.0, f.profile}).ok());
  Outcome out = RunToEnd(*runner);
  ASSERT_TRUE(out.ends.at(1).ok()) << out.ends.at(1);
  const size_t pieces = out.chunks.at(1).size();  // one chunk per piece (not streaming)
  EXPECT_GE(pieces, 2u);
  EXPECT_EQ(out.audio.at(1).size(), pieces * 3 * kSamplesPerToken);
}

// A configured small capacity: room for 6 text tokens beside the prompt, so a short sentence
// takes several pieces; a capacity the prompt alone fills is refused with a code, not as a
// failed Admit.
TEST(CosyVoiceRunner, PiecesFitAConfiguredCapacityAndAPromptThatFillsItIsRefused) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  Fixture probe = Load();
  ASSERT_TRUE(probe.profile);
  const size_t prompt = probe.profile->tensors.at("transcript_tokens").ints.size() +
                        probe.profile->tensors.at("prompt_speech_tokens").ints.size();
  const double ratio = probe.engine->manifest().sampling.max_token_text_ratio;
  // S + max_len - 1 slots with S = 2 + prompt + text (LlmDecoder::Admit).
  const int six = static_cast<int>(1 + prompt + 6 + static_cast<size_t>(6 * ratio));
  {
    Fixture f = Load(false, six);
    ASSERT_TRUE(f.profile);
    auto runner = StoppingRunner(*f.engine, 2);
    ASSERT_TRUE(runner);
    ASSERT_TRUE(runner->Begin(1, {"Hello there, my friend.", "v", 1.0, f.profile}).ok());
    Outcome out = RunToEnd(*runner);
    ASSERT_TRUE(out.ends.at(1).ok()) << out.ends.at(1);
    EXPECT_GE(out.chunks.at(1).size(), 3u);  // 23 bytes, about a token each, 6 per piece
  }
  Fixture full = Load(false, static_cast<int>(prompt));
  ASSERT_TRUE(full.profile);
  auto runner = full.engine->CreateRunner();
  ASSERT_TRUE(runner.ok());
  absl::Status refused = (*runner)->Begin(1, {"Hello.", "v", 1.0, full.profile});
  EXPECT_TRUE(absl::IsInvalidArgument(refused)) << refused;
  EXPECT_EQ(core::DetailOf(refused).code, "prompt_too_long");
  EXPECT_THAT(refused.message(), HasSubstr("llm_capacity"));
}

}  // namespace
}  // namespace voxserve::engine::cosyvoice
