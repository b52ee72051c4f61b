// FlowMatcher on the tiny bundle against the goldens upstream's modules computed on its weights
// (tools/cosyvoice_export/goldens.py _flow): the encoder against flow.encoder/N, one CFG
// estimator pair against flow.estimator/N, the whole flow against flow.full/N (upstream's
// flow.inference, 10 Euler steps, the same rand_noise).
//
// Tolerances. verify-bundle holds each stage to its golden's atol (index.json: 1e-3 for the
// encoder and one estimator pair, 1e-2 for the whole flow, sized for real-dimension weights,
// where ten Euler steps feed each velocity error back into x and the guidance weights the
// conditioned row by 1.7). These tests hold the tiny bundle to kTiny = 1e-4: ORT's and torch's
// float32 kernels differ by a few ulp per op, and measured here the worst element is 3.5e-6
// (mu), 7.7e-6 (one pair), 4.5e-6 (whole flow, of a mel peaking at 5.8); the margin covers other
// CPUs' kernels (summation order of AVX2 vs AVX-512 GEMMs). A wrong schedule, guidance sign,
// row order or prompt slice moves the mel by O(1).
#include "engine/cosyvoice/flow_matcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>

#include "engine/cosyvoice/bundle_check.h"
#include "engine/cosyvoice/bundle_verifier.h"
#include "support/test_paths.h"
#include "unit/engine/cosyvoice_bundle/tiny_bundle.h"

namespace voxserve::engine::cosyvoice {
namespace {

using ::testing::HasSubstr;
using testing::TinyBundle;

constexpr double kTiny = 1e-4;

std::vector<int32_t> Ints(const NpyArray& a) { return {a.ints.begin(), a.ints.end()}; }

// The golden inputs of flow.full/N, owned, with a FlowRequest viewing them.
struct GoldenRequest {
  std::vector<int32_t> tokens, prompt_tokens;
  std::vector<float> prompt_mel, embedding;
  FlowRequest view() const { return {tokens, prompt_tokens, prompt_mel, embedding}; }
};

// One matcher for all tests of the suite (opening the graphs costs more than a test).
class FlowMatcherTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testing::HaveTinyBundle()) return;
    auto manifest = LoadBundleManifest(TinyBundle());
    ASSERT_TRUE(manifest.ok()) << manifest.status();
    manifest_ = new BundleManifest(*manifest);
    auto flow = FlowMatcher::Create(*manifest_, TinyBundle(), Config());
    ASSERT_TRUE(flow.ok()) << flow.status();
    flow_ = flow->release();
    auto goldens = LoadGoldens(*manifest_, TinyBundle());
    ASSERT_TRUE(goldens.ok()) << goldens.status();
    goldens_ = new std::vector<GoldenStage>(std::move(*goldens));
  }
  static void TearDownTestSuite() {
    delete flow_;
    delete manifest_;
    delete goldens_;
    flow_ = nullptr;
    manifest_ = nullptr;
    goldens_ = nullptr;
  }
  void SetUp() override {
    VOXSERVE_REQUIRE_TINY_BUNDLE();
    ASSERT_NE(flow_, nullptr);
  }

  static onnx::OnnxSessionConfig Config() {
    onnx::OnnxSessionConfig config;
    config.intra_op_threads = 1;
    config.execution_provider = testing::TestExecutionProvider();
    return config;
  }

  // The tiny bundle's manifest with the estimator whose batch axis is dynamic (the fixture
  // cosyvoice_flow_dynamic_batch_estimator writes it from the bundle's), or none without it.
  static std::optional<BundleManifest> DynamicBatchManifest() {
    const std::string dynamic = testing::FixturePath("VOXSERVE_DYNAMIC_BATCH_ESTIMATOR",
                                                     test_paths::kDynamicBatchEstimator);
    if (!std::filesystem::exists(dynamic)) return std::nullopt;
    BundleManifest m = *manifest_;
    m.graphs["flow_estimator"].file = dynamic;  // absolute: replaces the bundle path
    return m;
  }

  const GoldenStage& Golden(const std::string& name) {
    for (const GoldenStage& g : *goldens_) {
      if (g.name == name) return g;
    }
    ADD_FAILURE() << "no golden stage " << name;
    return goldens_->front();
  }

  NpyArray Tensor(const GoldenStage& g, const std::string& key, bool output) {
    auto array = output ? g.Output(key) : g.Input(key);
    EXPECT_TRUE(array.ok()) << array.status();
    return array.ok() ? *array : NpyArray{};
  }

  GoldenRequest Request(int n) {
    const GoldenStage& g = Golden("flow.full/" + std::to_string(n));
    return {Ints(Tensor(g, "token", false)), Ints(Tensor(g, "prompt_token", false)),
            Tensor(g, "prompt_mel", false).floats, Tensor(g, "embedding", false).floats};
  }

  double Error(const std::vector<float>& found, const NpyArray& want, const std::string& what) {
    auto error = MaxAbsError(found, want, what);
    EXPECT_TRUE(error.ok()) << error.status();
    return error.ok() ? *error : 1e9;
  }

  static BundleManifest* manifest_;
  static FlowMatcher* flow_;
  static std::vector<GoldenStage>* goldens_;
};
BundleManifest* FlowMatcherTest::manifest_ = nullptr;
FlowMatcher* FlowMatcherTest::flow_ = nullptr;
std::vector<GoldenStage>* FlowMatcherTest::goldens_ = nullptr;

TEST_F(FlowMatcherTest, EncoderMatchesUpstreamMuAndSpeakerProjection) {
  for (int n : {0, 1}) {
    GoldenRequest r = Request(n);
    auto c = flow_->Encode(r.view());
    ASSERT_TRUE(c.ok()) << c.status();
    const GoldenStage& g = Golden("flow.encoder/" + std::to_string(n));
    EXPECT_EQ(c->frames, 2 * static_cast<int>(r.prompt_tokens.size() + r.tokens.size()));
    EXPECT_EQ(c->prompt_frames, 2 * static_cast<int>(r.prompt_tokens.size()));
    double mu = Error(c->mu, Tensor(g, "mu", true), "mu");
    double spks = Error(c->spks, Tensor(g, "spks", true), "spks");
    EXPECT_LE(mu, kTiny) << g.name;
    EXPECT_LE(spks, kTiny) << g.name;
    std::printf("%s: mu max abs %.3g, spks %.3g (held to %.3g; golden atol %.3g)\n", g.name.c_str(),
                mu, spks, kTiny, g.atol);
  }
}

TEST_F(FlowMatcherTest, CondIsThePromptMelInThePromptFramesAndZerosAfter) {
  GoldenRequest r = Request(0);
  auto c = flow_->Encode(r.view());
  ASSERT_TRUE(c.ok()) << c.status();
  // The golden estimator's cond is [2, 80, T]; row 0 is the conditioned one upstream builds.
  NpyArray cond = Tensor(Golden("flow.estimator/0"), "cond", false);
  std::vector<float> row0(cond.floats.begin(), cond.floats.begin() + cond.floats.size() / 2);
  EXPECT_EQ(c->cond, row0);
  EXPECT_GT(c->prompt_frames, 0);
  EXPECT_EQ(c->cond[5 * c->frames + 3], r.prompt_mel[3 * 80 + 5]);  // bin 5, frame 3
  EXPECT_EQ(c->cond[5 * c->frames + c->prompt_frames], 0.0f);
}

TEST_F(FlowMatcherTest, OneCfgEstimatorPairMatchesUpstream) {
  for (int n : {0, 1}) {
    const GoldenStage& g = Golden("flow.estimator/" + std::to_string(n));
    auto c = flow_->Encode(Request(n).view());
    ASSERT_TRUE(c.ok()) << c.status();
    NpyArray x = Tensor(g, "x", false);  // both rows hold the same noise
    std::vector<float> x0(x.floats.begin(), x.floats.begin() + x.floats.size() / 2);
    NpyArray t = Tensor(g, "t", false);
    auto out = flow_->EstimatorStep(*c, x0, t.floats.at(0));
    ASSERT_TRUE(out.ok()) << out.status();
    double error = Error(*out, Tensor(g, "estimator_out", true), g.name);
    EXPECT_LE(error, kTiny) << g.name;
    std::printf("%s: max abs %.3g (held to %.3g; golden atol %.3g)\n", g.name.c_str(), error, kTiny,
                g.atol);
  }
}

TEST_F(FlowMatcherTest, WholeFlowMatchesUpstreamInference) {
  for (int n : {0, 1}) {
    GoldenRequest r = Request(n);
    auto mel = flow_->Run(r.view());
    ASSERT_TRUE(mel.ok()) << mel.status();
    EXPECT_EQ(mel->bins, 80);
    EXPECT_EQ(mel->frames, 2 * static_cast<int>(r.tokens.size()));  // prompt frames cut off
    const GoldenStage& g = Golden("flow.full/" + std::to_string(n));
    NpyArray want = Tensor(g, "mel", true);
    ASSERT_EQ(want.shape, (std::vector<int64_t>{80, mel->frames}));
    double error = Error(mel->values, want, g.name);
    EXPECT_LE(error, kTiny) << g.name;
    double peak = 0;
    for (float v : want.floats) peak = std::max(peak, std::fabs(static_cast<double>(v)));
    std::printf("%s: max abs %.3g of peak %.3g (held to %.3g; golden atol %.3g)\n", g.name.c_str(),
                error, peak, kTiny, g.atol);
  }
}

TEST_F(FlowMatcherTest, TheSameRequestGivesTheSameMel) {
  GoldenRequest r = Request(1);
  auto a = flow_->Run(r.view());
  auto b = flow_->Run(r.view());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->values, b->values);  // the noise is the bundle's fixed tensor, not fresh
}

TEST_F(FlowMatcherTest, ABatchGivesEachRequestItsOwnResultAndABadOneFailsAlone) {
  GoldenRequest r0 = Request(0), r1 = Request(1);
  GoldenRequest bad = r0;
  bad.embedding.pop_back();
  std::vector<FlowRequest> batch = {r1.view(), bad.view(), r0.view(), r1.view()};
  const int64_t calls = flow_->estimator_calls();
  auto results = flow_->RunBatch(batch);
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(flow_->estimator_calls() - calls, 30);  // one pair per call: 3 good requests x 10
  ASSERT_TRUE(results[0].ok() && results[2].ok() && results[3].ok());
  EXPECT_TRUE(absl::IsInvalidArgument(results[1].status())) << results[1].status();
  auto alone0 = flow_->Run(r0.view());
  auto alone1 = flow_->Run(r1.view());
  ASSERT_TRUE(alone0.ok() && alone1.ok());
  EXPECT_EQ(results[0]->values, alone1->values);
  EXPECT_EQ(results[2]->values, alone0->values);
  EXPECT_EQ(results[3]->values, alone1->values);
}

TEST_F(FlowMatcherTest, BadRequestsGetClearErrors) {
  GoldenRequest r = Request(0);
  auto expect = [&](const GoldenRequest& req, absl::StatusCode code, const std::string& text) {
    auto mel = flow_->Run(req.view());
    ASSERT_FALSE(mel.ok()) << text;
    EXPECT_EQ(mel.status().code(), code) << mel.status();
    EXPECT_THAT(std::string(mel.status().message()), HasSubstr(text));
  };
  GoldenRequest none = r;
  none.tokens.clear();
  expect(none, absl::StatusCode::kInvalidArgument, "no speech tokens");
  GoldenRequest embedding = r;
  embedding.embedding.resize(80);
  expect(embedding, absl::StatusCode::kInvalidArgument, "embedding has 80 values, expected 192");
  GoldenRequest mel = r;
  mel.prompt_mel.resize(mel.prompt_mel.size() - 80);  // one frame short of 2 per prompt token
  expect(mel, absl::StatusCode::kInvalidArgument, "prompt_mel has");
  GoldenRequest transposed = r;
  transposed.prompt_tokens.pop_back();  // tokens and mel no longer 1:2
  expect(transposed, absl::StatusCode::kInvalidArgument, "2 frames per prompt token");
  GoldenRequest high = r;
  high.tokens[2] = 6561;  // eos is the LLM's, not a flow token
  expect(high, absl::StatusCode::kInvalidArgument, "speech token 6561 at position 2");
  GoldenRequest negative = r;
  negative.prompt_tokens[0] = -1;
  expect(negative, absl::StatusCode::kInvalidArgument, "prompt speech token -1 at position 0");
  GoldenRequest nan = r;
  nan.embedding[7] = std::nanf("");
  expect(nan, absl::StatusCode::kInvalidArgument, "embedding holds a NaN");
  GoldenRequest inf = r;
  inf.prompt_mel[11] = INFINITY;
  expect(inf, absl::StatusCode::kInvalidArgument, "prompt_mel holds a NaN or infinity");
  GoldenRequest lengthy = r;
  lengthy.tokens.assign(7500, 1);  // + the prompt: past 15000 frames of noise
  expect(lengthy, absl::StatusCode::kOutOfRange, "the flow's noise covers 15000");
}

// The tiny encoder's position tables hold 600 frames (tools/cosyvoice_export/upstream_modules.py
// TINY_MAX_POSITIONS): 300 tokens run, 301 would fail inside ORT and are refused before it.
TEST_F(FlowMatcherTest, TheEncodersTokenLimitIsCheckedBeforeTheGraphRuns) {
  ASSERT_EQ(flow_->max_tokens(), 300);
  GoldenRequest r = Request(0);
  r.tokens.assign(300 - r.prompt_tokens.size(), 7);
  auto at_limit = flow_->Encode(r.view());
  EXPECT_TRUE(at_limit.ok()) << at_limit.status();
  r.tokens.push_back(7);
  auto past = flow_->Encode(r.view());
  EXPECT_TRUE(absl::IsOutOfRange(past.status())) << past.status();
  EXPECT_THAT(std::string(past.status().message()), HasSubstr("takes at most 300"));
}

TEST_F(FlowMatcherTest, EstimatorStepRefusesAnXOfTheWrongLength) {
  auto c = flow_->Encode(Request(0).view());
  ASSERT_TRUE(c.ok());
  std::vector<float> x(80 * (c->frames - 1));
  auto out = flow_->EstimatorStep(*c, x, 0.5f);
  EXPECT_TRUE(absl::IsInvalidArgument(out.status())) << out.status();
}

TEST_F(FlowMatcherTest, AGraphWithoutTheEstimatorsInputsIsRefusedByName) {
  BundleManifest m = *manifest_;
  m.graphs["flow_estimator"].file = m.graphs["campplus"].file;
  auto flow = FlowMatcher::Create(m, TinyBundle(), Config());
  ASSERT_FALSE(flow.ok());
  EXPECT_THAT(std::string(flow.status().message()), HasSubstr("has no input 'x'"));
}

// RunBatch's stacked path: an estimator with a dynamic batch axis (the fixture
// cosyvoice_flow_dynamic_batch_estimator writes one from the bundle's) takes the row pairs of all
// requests of one length in one call; each request gets the mel it gets alone.
TEST_F(FlowMatcherTest, RequestsOfOneLengthShareEstimatorCallsWhenTheBatchAxisIsDynamic) {
  std::optional<BundleManifest> m = DynamicBatchManifest();
  if (!m)
    GTEST_SKIP() << "no dynamic-batch estimator (fixture cosyvoice_flow_dynamic_batch_estimator)";
  auto stacked = FlowMatcher::Create(*m, TinyBundle(), Config());
  ASSERT_TRUE(stacked.ok()) << stacked.status();
  EXPECT_EQ((*stacked)->estimator_batch(), 0);
  GoldenRequest a = Request(0), b = a, c = a, other = Request(1);
  std::reverse(b.tokens.begin(), b.tokens.end());  // same length, other tokens
  for (float& v : c.embedding) v = -v;             // same tokens, another voice
  std::vector<FlowRequest> batch = {a.view(), other.view(), b.view(), c.view()};
  auto results = (*stacked)->RunBatch(batch);
  ASSERT_EQ(results.size(), 4u);
  // Ten steps for the group of three, ten for `other`; run one pair per call it would be 40.
  EXPECT_EQ((*stacked)->estimator_calls(), 20);
  for (size_t i = 0; i < batch.size(); ++i) {
    ASSERT_TRUE(results[i].ok()) << results[i].status();
    auto alone = flow_->Run(batch[i]);
    ASSERT_TRUE(alone.ok()) << alone.status();
    double worst = 0;
    for (size_t j = 0; j < alone->values.size(); ++j) {
      worst = std::max(worst, std::fabs(double{alone->values[j]} - results[i]->values[j]));
    }
    // Only the GEMMs' blocking changes with the batch; rows are computed independently.
    EXPECT_LE(worst, kTiny) << "request " << i;
    std::printf("request %zu: stacked vs alone max abs %.3g\n", i, worst);
  }
  EXPECT_NE(results[0]->values, results[2]->values);
  EXPECT_NE(results[0]->values, results[3]->values);
}

// Length buckets (issue 44): requests and streaming hops of different lengths that round up to
// one bucket share each estimator call, padded to the longest with their mask 0 after their own
// frames; the estimator's convolutions are causal and its attention masked, so each comes out as
// it does alone.
TEST_F(FlowMatcherTest, RunsOfOneLengthBucketShareEstimatorCallsAndComeOutAsAlone) {
  std::optional<BundleManifest> m = DynamicBatchManifest();
  if (!m)
    GTEST_SKIP() << "no dynamic-batch estimator (fixture cosyvoice_flow_dynamic_batch_estimator)";
  auto bucketed = FlowMatcher::Create(*m, TinyBundle(), Config(), /*length_bucket_frames=*/1000);
  ASSERT_TRUE(bucketed.ok()) << bucketed.status();
  FlowMatcher& flow = **bucketed;
  auto worst = [](const FlowMel& a, const FlowMel& b) {
    double w = 0;
    for (size_t j = 0; j < a.values.size(); ++j) {
      w = std::max(w, std::fabs(double{a.values[j]} - b.values[j]));
    }
    return w;
  };

  GoldenRequest a = Request(0), shorter = a, shortest = a, other = Request(1);
  shorter.tokens.resize(a.tokens.size() - 3);
  shortest.tokens.resize(a.tokens.size() / 2);
  std::vector<FlowRequest> pieces = {a.view(), shorter.view(), other.view(), shortest.view()};
  std::set<int> lengths, keys;
  for (const FlowRequest& r : pieces) {
    lengths.insert(flow.PieceFrames(r));
    keys.insert(flow.ShareKey(flow.PieceFrames(r)));
  }
  ASSERT_GE(lengths.size(), 3u);
  ASSERT_EQ(keys.size(), 1u);
  int64_t calls = flow.estimator_calls();
  auto results = flow.RunBatch(pieces);
  EXPECT_EQ(flow.estimator_calls() - calls, 10);  // one Euler loop; by length it would be 30+
  for (size_t i = 0; i < pieces.size(); ++i) {
    ASSERT_TRUE(results[i].ok()) << results[i].status();
    auto alone = flow_->Run(pieces[i]);
    ASSERT_TRUE(alone.ok()) << alone.status();
    ASSERT_EQ(results[i]->frames, alone->frames) << "request " << i;
    EXPECT_LE(worst(*results[i], *alone), kTiny) << "request " << i;
    std::printf("piece %zu (%d frames): padded vs alone max abs %.3g\n", i, alone->frames,
                worst(*results[i], *alone));
  }

  // Two streams' first hops of other lengths (non-final: the chunk-causal encoder, lookahead).
  ASSERT_TRUE(flow.has_stream_encoder());
  GoldenRequest hop13 = a, hop23 = a;
  hop13.tokens.resize(13);
  hop23.tokens.resize(23);
  std::vector<FlowMatcher::Hop> hops = {{hop13.view(), 0, false}, {hop23.view(), 0, false}};
  ASSERT_NE(flow.HopFrames(hops[0]), flow.HopFrames(hops[1]));
  calls = flow.estimator_calls();
  auto mels = flow.RunPrefixBatch(hops);
  EXPECT_EQ(flow.estimator_calls() - calls, 10);
  for (size_t i = 0; i < hops.size(); ++i) {
    ASSERT_TRUE(mels[i].ok()) << mels[i].status();
    auto alone = flow_->RunPrefix(hops[i].request, 0, false);
    ASSERT_TRUE(alone.ok()) << alone.status();
    ASSERT_EQ(mels[i]->frames, alone->frames);
    EXPECT_LE(worst(*mels[i], *alone), kTiny) << "hop " << i;
    std::printf("hop %zu: padded vs alone max abs %.3g\n", i, worst(*mels[i], *alone));
  }

  // Without buckets the same hops run apart.
  auto exact = FlowMatcher::Create(*m, TinyBundle(), Config());
  ASSERT_TRUE(exact.ok());
  (*exact)->RunPrefixBatch(hops);
  EXPECT_EQ((*exact)->estimator_calls(), 20);
}

TEST_F(FlowMatcherTest, UpstreamsEstimatorTakesOneCfgPairPerCall) {
  EXPECT_EQ(flow_->estimator_batch(), 2);  // cosyvoice/bin/export_onnx.py fixes the batch at 2
}

// OnnxSession::RunInPlace, which the Euler loop runs on: ORT writes into the caller's buffers,
// and buffers that do not fit the graph are an error naming the graph, never a write past them.
TEST(OnnxSessionRunInPlace, WritesTheOutputInPlaceAndRefusesBuffersThatDoNotFit) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  auto session = onnx::OnnxSession::Create(TinyBundle() + "/flow.decoder.estimator.fp32.onnx",
                                           onnx::OnnxSessionConfig{});
  ASSERT_TRUE(session.ok()) << session.status();
  const int64_t t = 8;
  std::vector<float> x(2 * 80 * t, 0.5f), mask(2 * t, 1.0f), mu(2 * 80 * t, 0.1f), time(2, 0.3f),
      spks(2 * 80, 0.2f), cond(2 * 80 * t, 0.0f), out(2 * 80 * t, NAN);
  auto view = [](std::vector<float>& values, std::vector<int64_t> shape) {
    return onnx::TensorView{onnx::ElementType::kFloat, values.data(), std::move(shape)};
  };
  std::vector<std::pair<std::string, onnx::TensorView>> inputs = {
      {"x", view(x, {2, 80, t})},    {"mask", view(mask, {2, 1, t})},
      {"mu", view(mu, {2, 80, t})},  {"t", view(time, {2})},
      {"spks", view(spks, {2, 80})}, {"cond", view(cond, {2, 80, t})}};
  ASSERT_TRUE((*session)->RunInPlace(inputs, {{"estimator_out", view(out, {2, 80, t})}}).ok());
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](float v) { return std::isfinite(v); }));
  // The same inputs through the copying Run give the same values.
  std::vector<std::pair<std::string, onnx::Tensor>> copied;
  for (const auto& [name, b] : inputs) {
    size_t n = 1;
    for (int64_t d : b.shape) n *= static_cast<size_t>(d);
    const float* data = static_cast<const float*>(b.data);
    copied.emplace_back(name, onnx::Tensor::Floats(b.shape, {data, data + n}));
  }
  auto outputs = (*session)->Run(copied);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  EXPECT_EQ(outputs->at(0).ToFloats(), out);

  std::vector<float> small(2 * 80 * (t - 1));
  absl::Status wrong =
      (*session)->RunInPlace(inputs, {{"estimator_out", view(small, {2, 80, t - 1})}});
  EXPECT_FALSE(wrong.ok());
  EXPECT_THAT(std::string(wrong.message()), HasSubstr("flow.decoder.estimator.fp32.onnx"));
  inputs.pop_back();  // no cond
  EXPECT_FALSE((*session)->RunInPlace(inputs, {{"estimator_out", view(out, {2, 80, t})}}).ok());
}

TEST(FlowStage, VerifyBundleReportsTheWholeFlowWithinTolerance) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  auto verifier = BundleVerifier::Create(TinyBundle());
  ASSERT_TRUE(verifier.ok()) << verifier.status();
  ASSERT_TRUE(AddFlowStages(**verifier).ok());
  auto results = (*verifier)->Run();
  std::string table = FormatResults(results);
  int checked = 0;
  for (const auto& r : results) {
    if (!r.stage.starts_with("flow.full/")) continue;
    EXPECT_EQ(r.outcome.kind, StageOutcome::Kind::kPassed) << table;
    ++checked;
  }
  EXPECT_EQ(checked, 2) << table;
}

}  // namespace
}  // namespace voxserve::engine::cosyvoice
