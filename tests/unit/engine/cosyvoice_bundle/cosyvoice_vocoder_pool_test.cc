// CosyVoiceRunner with flow + HiFT on the engine's vocoder pool (docs/cosyvoice-generation.md,
// "The engine"), on the tiny random-weight bundle: while one segment's piece is being vocoded the
// others' LLM keeps stepping, a released segment's vocoding is dropped, a segment's chunks keep
// their order across pieces and it ends once, after its last audio. A test hook holds chosen
// vocoder jobs on a gate, so the interleavings are forced, not timed.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <set>

#include "engine/cosyvoice/cosyvoice_engine.h"
#include "engine/cosyvoice/cosyvoice_runner.h"
#include "nlohmann/json.hpp"
#include "support/test_paths.h"
#include "unit/engine/cosyvoice_bundle/tiny_bundle.h"

namespace voxserve::engine::cosyvoice {
namespace {

using testing::TinyBundle;

constexpr int64_t kStopToken = 6562;      // ends a piece at once (llm.py:544)
constexpr size_t kSamplesPerToken = 960;  // 2 mel frames per token x 480 samples per frame
// A held job waits at most this long: a runner that vocoded on its step thread would block its
// own Step on the gate, and the test fails on the timeout instead of hanging.
constexpr auto kGateTimeout = std::chrono::seconds(30);

struct Fixture {
  std::unique_ptr<CosyVoiceEngine> engine;
  std::shared_ptr<const VoiceProfile> profile;
};

Fixture Load(int vocoder_threads, bool streaming = false, const std::string& bundle = TinyBundle(),
             int first_hop = 0, int length_bucket = 0) {
  Fixture f;
  CosyVoiceEngineConfig config;
  config.model_id = "cv";
  config.bundle_path = bundle;
  config.streaming = streaming;
  config.stream_first_hop = first_hop;
  config.flow_length_bucket = length_bucket;
  config.vocoder_threads = vocoder_threads;
  config.session.execution_provider = testing::TestExecutionProvider();
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

// Counts each LLM sequence's steps (the decoder's ids: 1, 2, ... in admission order) and stops
// sequence k after tokens(k) tokens. Safe to read from the test thread: the hook runs in Step.
struct LlmSteps {
  std::map<uint64_t, int> seen;
  int Of(uint64_t llm_id) const { return seen.contains(llm_id) ? seen.at(llm_id) : 0; }
};
std::unique_ptr<CosyVoiceRunner> Runner(CosyVoiceEngine& engine,
                                        std::function<int(uint64_t)> tokens,
                                        std::shared_ptr<LlmSteps> steps) {
  auto runner = engine.CreateRunner();
  EXPECT_TRUE(runner.ok()) << runner.status();
  if (!runner.ok()) return nullptr;
  std::unique_ptr<CosyVoiceRunner> cv(dynamic_cast<CosyVoiceRunner*>(runner->release()));
  cv->decoder().SetLogpHook([steps, tokens](uint64_t id, std::span<float> logp) {
    if (++steps->seen[id] <= tokens(id)) return;
    for (float& value : logp) value = -std::numeric_limits<float>::infinity();
    logp[kStopToken] = 0;
  });
  return cv;
}

// Holds the vocoder jobs of the sequences in `held` until Open(); records every job started.
// Its state is shared with the hook, so a job outliving a failed test reads no freed memory;
// the destructor opens the gate.
class Gate {
 public:
  explicit Gate(std::set<SequenceId> held) : state_(std::make_shared<State>()) {
    state_->held = std::move(held);
  }
  ~Gate() { Open(); }
  CosyVoiceRunner::VocodeHook Hook() {
    return [state = state_](SequenceId id) {
      std::unique_lock lock(state->mutex);
      state->started.push_back(id);
      state->changed.notify_all();
      if (state->held.contains(id)) {
        EXPECT_TRUE(state->changed.wait_for(lock, kGateTimeout, [&] { return state->open; }))
            << "the gate stayed shut: the test's Steps could not go on without this job";
      }
    };
  }
  void Open() {
    std::lock_guard lock(state_->mutex);
    state_->open = true;
    state_->changed.notify_all();
  }
  std::vector<SequenceId> Started() {
    std::lock_guard lock(state_->mutex);
    return state_->started;
  }
  // Waits (bounded) until a job of `id` has started.
  bool WaitStarted(SequenceId id) {
    std::unique_lock lock(state_->mutex);
    return state_->changed.wait_for(lock, kGateTimeout, [&] {
      return std::find(state_->started.begin(), state_->started.end(), id) != state_->started.end();
    });
  }

 private:
  struct State {
    std::mutex mutex;
    std::condition_variable changed;
    std::set<SequenceId> held;
    std::vector<SequenceId> started;
    bool open = false;
  };
  std::shared_ptr<State> state_;
};

// What the Steps reported, checked against the contract as it comes: nothing after an end.
struct Outcome {
  std::map<SequenceId, std::vector<size_t>> chunks;  // sizes of the non-empty chunks
  std::map<SequenceId, std::vector<float>> audio;
  std::map<SequenceId, absl::Status> ends;
  void Take(std::vector<SequenceStep> steps) {
    for (SequenceStep& step : steps) {
      EXPECT_FALSE(ends.contains(step.id)) << "output after the end of " << step.id;
      if (!step.chunk.samples.empty()) chunks[step.id].push_back(step.chunk.samples.size());
      auto& joined = audio[step.id];
      joined.insert(joined.end(), step.chunk.samples.begin(), step.chunk.samples.end());
      if (step.end) ends[step.id] = *step.end;
    }
  }
};
// Steps until `done` or 5000 Steps (each Step with only vocoding pending waits <= 10 ms).
template <typename Done>
void StepUntil(CosyVoiceRunner& runner, Outcome& out, Done done) {
  for (int guard = 0; !done() && guard < 5000; ++guard) out.Take(runner.Step());
}

// A copy of the tiny bundle whose flow estimator has a dynamic batch axis (the flow tests'
// fixture cosyvoice_flow_dynamic_batch_estimator writes it); null when that fixture did not run.
std::unique_ptr<testing::BrokenBundle> DynamicBatchBundle(const std::string& name) {
  const std::string dynamic =
      testing::FixturePath("VOXSERVE_DYNAMIC_BATCH_ESTIMATOR", test_paths::kDynamicBatchEstimator);
  if (!std::filesystem::exists(dynamic)) return nullptr;
  constexpr const char* kFile = "flow.decoder.estimator.dynamic-batch.onnx";
  auto bundle = std::make_unique<testing::BrokenBundle>(name, [&](nlohmann::json& m) {
    nlohmann::json& estimator = m["graphs"]["flow_estimator"];
    estimator["file"] = kFile;
    for (const char* side : {"inputs", "outputs"}) {
      for (auto& tensor : estimator[side]) tensor["shape"][0] = "rows";
    }
  });
  std::filesystem::create_symlink(std::filesystem::absolute(dynamic),
                                  std::filesystem::path(bundle->dir()) / kFile);
  return bundle;
}

// The largest sample difference of two equally long signals.
double WorstDifference(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(double{a[i]} - b[i]));
  return worst;
}

TEST(CosyVoiceVocoderPool, TheLlmKeepsSteppingWhileAnotherSegmentIsVocoded) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  Fixture f = Load(/*vocoder_threads=*/2);  // one held, one for the other segment
  ASSERT_TRUE(f.profile);
  auto llm = std::make_shared<LlmSteps>();
  // Segment 1 (LLM id 1) ends after 3 tokens, segment 2 (id 2) after 40.
  auto runner = Runner(
      *f.engine, [](uint64_t id) { return id == 1 ? 3 : 40; }, llm);
  ASSERT_TRUE(runner);
  Gate gate({1});
  runner->SetVocodeHookForTest(gate.Hook());
  ASSERT_TRUE(runner->Begin(1, {"Hello world.", "v", 1.0, f.profile}).ok());
  ASSERT_TRUE(runner->Begin(2, {"Good morning.", "v", 1.0, f.profile}).ok());
  Outcome out;
  StepUntil(*runner, out, [&] { return out.ends.contains(2); });
  // Segment 2 decoded all 40 tokens and was vocoded while segment 1's audio was held.
  ASSERT_TRUE(out.ends.contains(2));
  EXPECT_TRUE(out.ends.at(2).ok()) << out.ends.at(2);
  EXPECT_EQ(out.audio.at(2).size(), 40 * kSamplesPerToken);
  EXPECT_GE(llm->Of(2), 40);
  EXPECT_FALSE(out.ends.contains(1));
  EXPECT_TRUE(out.audio[1].empty());
  EXPECT_EQ(runner->Active(), 1u);
  gate.Open();
  StepUntil(*runner, out, [&] { return runner->Active() == 0; });
  ASSERT_TRUE(out.ends.contains(1));
  EXPECT_TRUE(out.ends.at(1).ok()) << out.ends.at(1);
  EXPECT_EQ(out.audio.at(1).size(), 3 * kSamplesPerToken);
}

TEST(CosyVoiceVocoderPool, AReleasedSegmentsVocodingIsDroppedRunningOrQueued) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  Fixture f = Load(/*vocoder_threads=*/1);  // jobs run one at a time, in the order posted
  ASSERT_TRUE(f.profile);
  auto llm = std::make_shared<LlmSteps>();
  auto runner = Runner(
      *f.engine, [](uint64_t) { return 3; }, llm);
  ASSERT_TRUE(runner);
  Gate gate({1});
  runner->SetVocodeHookForTest(gate.Hook());
  ASSERT_TRUE(runner->Begin(1, {"Hello world.", "v", 1.0, f.profile}).ok());
  ASSERT_TRUE(runner->Begin(2, {"Hello world.", "v", 1.0, f.profile}).ok());
  Outcome out;
  // Every piece decoded: 1's job runs (held), 2's waits behind it in the pool.
  StepUntil(*runner, out,
            [&] { return runner->decoder().running() + runner->decoder().queued() == 0; });
  ASSERT_TRUE(gate.WaitStarted(1));
  runner->Release(1);  // running
  runner->Release(2);  // queued, not started
  EXPECT_EQ(runner->Active(), 0u);
  EXPECT_TRUE(runner->Step().empty());
  // A third segment's job queues behind both: once it ended, both were done with.
  ASSERT_TRUE(runner->Begin(3, {"Hello world.", "v", 1.0, f.profile}).ok());
  gate.Open();
  StepUntil(*runner, out, [&] { return runner->Active() == 0; });
  EXPECT_TRUE(out.ends.at(3).ok()) << out.ends.at(3);
  EXPECT_EQ(out.audio.at(3).size(), 3 * kSamplesPerToken);
  EXPECT_FALSE(out.ends.contains(1));
  EXPECT_FALSE(out.ends.contains(2));
  EXPECT_TRUE(out.audio[1].empty() && out.audio[2].empty());
  EXPECT_EQ(gate.Started(), (std::vector<SequenceId>{1, 3}));  // 2's job never ran
}

TEST(CosyVoiceVocoderPool, PiecesComeInOrderAndTheSegmentEndsOnceAfterTheLast) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  Fixture f = Load(/*vocoder_threads=*/2);
  ASSERT_TRUE(f.profile);
  auto llm = std::make_shared<LlmSteps>();
  // Piece k (the LLM's id k) has k + 2 tokens: its chunk's length names it.
  auto runner = Runner(
      *f.engine, [](uint64_t id) { return static_cast<int>(id) + 2; }, llm);
  ASSERT_TRUE(runner);
  Gate gate({1});
  runner->SetVocodeHookForTest(gate.Hook());
  std::string text;  // about 130 tokens: two or three pieces of 60-80 (SplitLimits)
  for (int i = 0; i < 20; ++i) text += "Sentence number " + std::to_string(i) + " is here. ";
  ASSERT_TRUE(runner->Begin(1, {text, "v", 1.0, f.profile}).ok());
  Outcome out;
  // Held: the first piece's audio. The LLM decodes every later piece meanwhile.
  StepUntil(*runner, out, [&] {
    return runner->decoder().running() + runner->decoder().queued() == 0 && llm->Of(2) > 0;
  });
  const size_t pieces = llm->seen.size();
  ASSERT_GE(pieces, 2u);
  EXPECT_TRUE(out.chunks[1].empty());
  EXPECT_FALSE(out.ends.contains(1));
  gate.Open();
  StepUntil(*runner, out, [&] { return runner->Active() == 0; });
  std::vector<size_t> expected;
  for (size_t k = 1; k <= pieces; ++k) expected.push_back((k + 2) * kSamplesPerToken);
  EXPECT_EQ(out.chunks[1], expected);
  ASSERT_TRUE(out.ends.contains(1));
  EXPECT_TRUE(out.ends.at(1).ok()) << out.ends.at(1);
}

TEST(CosyVoiceVocoderPool, StreamingHopsAreTheSameAloneOrBesideAnother) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  Fixture f = Load(/*vocoder_threads=*/2, /*streaming=*/true);
  ASSERT_TRUE(f.profile);
  auto alone_steps = std::make_shared<LlmSteps>();
  auto alone = Runner(
      *f.engine, [](uint64_t) { return 120; }, alone_steps);
  ASSERT_TRUE(alone);
  ASSERT_TRUE(alone->Begin(1, {"Good morning.", "v", 1.0, f.profile}).ok());
  Outcome one;
  StepUntil(*alone, one, [&] { return alone->Active() == 0; });
  ASSERT_TRUE(one.ends.at(1).ok()) << one.ends.at(1);
  ASSERT_GE(one.chunks.at(1).size(), 3u);  // hops of 25 (padded) and 50, then the rest

  auto both_steps = std::make_shared<LlmSteps>();
  auto both = Runner(
      *f.engine, [](uint64_t) { return 120; }, both_steps);
  ASSERT_TRUE(both);
  ASSERT_TRUE(both->Begin(1, {"Hello there.", "v", 1.0, f.profile}).ok());
  ASSERT_TRUE(both->Begin(2, {"Good morning.", "v", 1.0, f.profile}).ok());
  Outcome two;
  StepUntil(*both, two, [&] { return both->Active() == 0; });
  ASSERT_TRUE(two.ends.at(2).ok()) << two.ends.at(2);
  EXPECT_EQ(two.chunks.at(2), one.chunks.at(1));
  EXPECT_EQ(two.audio.at(2), one.audio.at(1));
}

// With an estimator whose batch axis is dynamic (the flow tests' fixture
// cosyvoice_flow_dynamic_batch_estimator writes one from the tiny bundle's), two segments' pieces
// of one length waiting in the pool together share its calls (FlowMatcher::RunBatchOnProvider)
// and each sounds as it does alone.
TEST(CosyVoiceVocoderPool, PiecesOfOneLengthShareTheEstimatorsCallsAndSoundAsAlone) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  auto bundle = DynamicBatchBundle("dynamic-batch");
  if (!bundle)
    GTEST_SKIP() << "no dynamic-batch estimator (fixture cosyvoice_flow_dynamic_batch_estimator)";
  Fixture f = Load(/*vocoder_threads=*/1, /*streaming=*/false, bundle->dir());
  ASSERT_TRUE(f.profile);
  ASSERT_EQ(f.engine->flow().estimator_batch(), 0);
  auto input = [&](uint64_t seed) {
    SegmentInput in{"Hello world.", "v", 1.0, f.profile};
    in.seed = seed;  // other tokens and source noise for each segment
    return in;
  };
  // Every piece stops after 7 tokens: the two are of one length.
  auto together = Runner(
      *f.engine, [](uint64_t) { return 7; }, std::make_shared<LlmSteps>());
  ASSERT_TRUE(together);
  Gate gate({1});  // holds segment 1's job until segment 2's waits behind it
  together->SetVocodeHookForTest(gate.Hook());
  ASSERT_TRUE(together->Begin(1, input(11)).ok());
  ASSERT_TRUE(together->Begin(2, input(22)).ok());
  Outcome out;
  StepUntil(*together, out,
            [&] { return together->decoder().running() + together->decoder().queued() == 0; });
  ASSERT_TRUE(gate.WaitStarted(1));
  const int64_t calls = f.engine->flow().estimator_calls();
  gate.Open();
  StepUntil(*together, out, [&] { return together->Active() == 0; });
  // One Euler loop of ten calls for both pieces' CFG pairs; one after the other would be 20.
  EXPECT_EQ(f.engine->flow().estimator_calls() - calls, 10);
  EXPECT_EQ(gate.Started(), (std::vector<SequenceId>{1, 2}));
  for (SequenceId id : {1, 2}) {
    ASSERT_TRUE(out.ends.contains(id));
    EXPECT_TRUE(out.ends.at(id).ok()) << out.ends.at(id);
    ASSERT_EQ(out.audio.at(id).size(), 7 * kSamplesPerToken);
    auto alone = Runner(
        *f.engine, [](uint64_t) { return 7; }, std::make_shared<LlmSteps>());
    ASSERT_TRUE(alone);
    ASSERT_TRUE(alone->Begin(id, input(id == 1 ? 11 : 22)).ok());
    Outcome single;
    StepUntil(*alone, single, [&] { return alone->Active() == 0; });
    ASSERT_EQ(single.audio.at(id).size(), out.audio.at(id).size());
    // Float rounding of the stacked rows at most.
    EXPECT_LE(WorstDifference(single.audio.at(id), out.audio.at(id)), 1e-4) << "segment " << id;
  }
  EXPECT_NE(out.audio.at(1), out.audio.at(2));
}

// Streaming (issue 44): two streams of one voice on one schedule are at their first hop with the
// same prefix length, so their hops waiting together share the estimator's calls
// (FlowMatcher::RunPrefixBatch) and HiFT's (HiftStream::PushBatch), and each sounds as it does
// alone. Their last hops differ in
// length (30 and 31 tokens) and run apart: 10 + 10 + 10 calls, where one hop after another would
// be 40.
TEST(CosyVoiceVocoderPool, StreamsAtTheSameHopShareTheEstimatorsCallsAndSoundAsAlone) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  auto bundle = DynamicBatchBundle("dynamic-batch-stream");
  if (!bundle)
    GTEST_SKIP() << "no dynamic-batch estimator (fixture cosyvoice_flow_dynamic_batch_estimator)";
  // First hop 10 tokens (+ 3 lookahead): the next (20) does not fit in 30 tokens.
  Fixture f = Load(/*vocoder_threads=*/1, /*streaming=*/true, bundle->dir(), /*first_hop=*/10);
  ASSERT_TRUE(f.profile);
  ASSERT_EQ(f.engine->flow().estimator_batch(), 0);
  ASSERT_TRUE(f.engine->flow().has_stream_encoder());
  auto input = [&](uint64_t seed) {
    SegmentInput in{"Hello world.", "v", 1.0, f.profile};
    in.seed = seed;
    return in;
  };
  auto tokens = [](uint64_t llm_id) { return llm_id == 1 ? 30 : 31; };
  auto together = Runner(*f.engine, tokens, std::make_shared<LlmSteps>());
  ASSERT_TRUE(together);
  Gate gate({1});  // holds segment 1's first hop until segment 2's waits behind it
  together->SetVocodeHookForTest(gate.Hook());
  ASSERT_TRUE(together->Begin(1, input(11)).ok());
  ASSERT_TRUE(together->Begin(2, input(22)).ok());
  Outcome out;
  // Both LLMs run to their end; their first hops (13 tokens each) were posted together at the
  // 13th token: segment 1's is held, segment 2's waits in the pool; their last hops wait in
  // their segments' queues.
  StepUntil(*together, out,
            [&] { return together->decoder().running() + together->decoder().queued() == 0; });
  ASSERT_TRUE(gate.WaitStarted(1));
  const int64_t calls = f.engine->flow().estimator_calls();
  const int64_t hift_calls = f.engine->hift().decoder_calls();
  gate.Open();
  StepUntil(*together, out, [&] { return together->Active() == 0; });
  EXPECT_EQ(f.engine->flow().estimator_calls() - calls, 30);
  // HiFT likewise: the first hops' mels (20 frames each) in one decoder call, then each last
  // hop's (its 40 or 42 frames after the 8 cached) alone: 3 calls, where in turn it is 4.
  ASSERT_TRUE(f.engine->hift().batches_rows());
  EXPECT_EQ(f.engine->hift().decoder_calls() - hift_calls, 3);
  for (SequenceId id : {1, 2}) {
    ASSERT_TRUE(out.ends.contains(id));
    EXPECT_TRUE(out.ends.at(id).ok()) << out.ends.at(id);
    ASSERT_EQ(out.chunks.at(id).size(), 2u) << "the first hop and the rest";
    EXPECT_EQ(out.audio.at(id).size(), static_cast<size_t>(id == 1 ? 30 : 31) * kSamplesPerToken);
    auto alone = Runner(
        *f.engine, [&](uint64_t) { return id == 1 ? 30 : 31; }, std::make_shared<LlmSteps>());
    ASSERT_TRUE(alone);
    ASSERT_TRUE(alone->Begin(id, input(id == 1 ? 11 : 22)).ok());
    Outcome single;
    StepUntil(*alone, single, [&] { return alone->Active() == 0; });
    EXPECT_EQ(single.chunks.at(id), out.chunks.at(id));
    ASSERT_EQ(single.audio.at(id).size(), out.audio.at(id).size());
    // Float rounding of the stacked rows at most.
    EXPECT_LE(WorstDifference(single.audio.at(id), out.audio.at(id)), 1e-4) << "segment " << id;
  }
}

// flow_length_bucket (issue 44): two streams of different voices (prompts two tokens apart)
// make hops of different lengths; each piece here is one hop (12 tokens: it ends before the first
// hop of 10 + 3 lookahead is due).
// Waiting together they share one Euler loop when both round up to one bucket, padded and
// masked, and each sounds as it does alone; without buckets they run apart.
int64_t EstimatorCallsOfTwoVoicesHops(int length_bucket) {
  auto bundle = DynamicBatchBundle("dynamic-batch-bucket-" + std::to_string(length_bucket));
  if (!bundle) return -1;
  Fixture f = Load(/*vocoder_threads=*/1, /*streaming=*/true, bundle->dir(), /*first_hop=*/10,
                   length_bucket);
  EXPECT_TRUE(f.profile);
  if (!f.profile) return -1;
  // The other voice: the same recording's profile less its last two prompt tokens (4 frames).
  VoiceProfile shorter = *f.profile;
  ProfileTensor& tokens = shorter.tensors.at("prompt_speech_tokens");
  ProfileTensor& mel = shorter.tensors.at("prompt_mel");
  tokens.ints.resize(tokens.ints.size() - 2);
  tokens.shape[0] -= 2;
  mel.floats.resize(mel.floats.size() - 4 * static_cast<size_t>(mel.shape[1]));
  mel.shape[0] -= 4;
  std::map<SequenceId, std::shared_ptr<const VoiceProfile>> voices = {
      {1, f.profile}, {2, std::make_shared<const VoiceProfile>(std::move(shorter))}};
  auto input = [&](SequenceId id) {
    SegmentInput in{"Hello world.", "v", 1.0, voices.at(id)};
    in.seed = id;
    return in;
  };
  auto twelve = [](uint64_t) { return 12; };
  auto together = Runner(*f.engine, twelve, std::make_shared<LlmSteps>());
  EXPECT_TRUE(together);
  if (!together) return -1;
  Gate gate({1});  // holds segment 1's hop until segment 2's waits behind it
  together->SetVocodeHookForTest(gate.Hook());
  EXPECT_TRUE(together->Begin(1, input(1)).ok());
  EXPECT_TRUE(together->Begin(2, input(2)).ok());
  Outcome out;
  StepUntil(*together, out,
            [&] { return together->decoder().running() + together->decoder().queued() == 0; });
  EXPECT_TRUE(gate.WaitStarted(1));
  const int64_t calls = f.engine->flow().estimator_calls();
  gate.Open();
  StepUntil(*together, out, [&] { return together->Active() == 0; });
  const int64_t used = f.engine->flow().estimator_calls() - calls;
  for (SequenceId id : {1, 2}) {
    EXPECT_TRUE(out.ends.contains(id) && out.ends.at(id).ok()) << "segment " << id;
    if (!out.audio.contains(id)) continue;
    EXPECT_EQ(out.audio.at(id).size(), 12 * kSamplesPerToken);
    auto alone = Runner(*f.engine, twelve, std::make_shared<LlmSteps>());
    EXPECT_TRUE(alone->Begin(id, input(id)).ok());
    Outcome single;
    StepUntil(*alone, single, [&] { return alone->Active() == 0; });
    EXPECT_EQ(single.audio.at(id).size(), out.audio.at(id).size());
    if (single.audio.at(id).size() == out.audio.at(id).size()) {
      EXPECT_LE(WorstDifference(single.audio.at(id), out.audio.at(id)), 1e-4) << "segment " << id;
    }
  }
  return used;
}

TEST(CosyVoiceVocoderPool, HopsOfOtherLengthsShareTheEstimatorsCallsInOneLengthBucket) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  const int64_t bucketed = EstimatorCallsOfTwoVoicesHops(/*length_bucket=*/1000);
  if (bucketed < 0) GTEST_SKIP() << "no dynamic-batch estimator or no voice";
  EXPECT_EQ(bucketed, 10);  // one Euler step for the bucket (1000 frames hold both lengths)
  EXPECT_EQ(EstimatorCallsOfTwoVoicesHops(/*length_bucket=*/0), 20);
}

}  // namespace
}  // namespace voxserve::engine::cosyvoice
