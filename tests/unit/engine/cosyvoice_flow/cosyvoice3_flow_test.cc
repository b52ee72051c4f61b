// CosyVoice3's flow (upstream's CausalMaskedDiffWithDiT: token embedding + pre-lookahead layer,
// no encoder, and a DiT estimator) through FlowMatcher, against upstream's own results on the same
// tiny random weights (fixture cosyvoice3_tiny, export.py --family cosyvoice3): the encoder's mu
// and spks, one CFG pair through the full and the chunk-masked estimator, the whole flow, and the
// streaming hops as CosyVoice3Model.token2wav runs them (the stream encoder and the chunk-masked
// estimator on non-final hops, the full one on the final hop), on the bundle's own manifest.
//
// Tolerance: kTiny = 1e-4 as for CosyVoice2's flow (flow_matcher_test.cc); the printed figures
// are the measured errors. A wrong mask, rotary pairing or lookahead moves the mel by O(1).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "engine/cosyvoice/bundle_check.h"
#include "engine/cosyvoice/bundle_verifier.h"
#include "engine/cosyvoice/flow_matcher.h"
#include "support/test_paths.h"
#include "unit/engine/cosyvoice_bundle/tiny_bundle.h"

namespace voxserve::engine::cosyvoice {
namespace {

using testing::TinyBundle;

constexpr double kTiny = 1e-4;

std::string Parts() {
  return testing::FixturePath("VOXSERVE_COSYVOICE3_TINY", test_paths::kCosyVoice3Tiny);
}

std::vector<int32_t> Ints(const NpyArray& a) { return {a.ints.begin(), a.ints.end()}; }

NpyArray Get(const absl::StatusOr<NpyArray>& array) {
  EXPECT_TRUE(array.ok()) << array.status();
  return array.ok() ? *array : NpyArray{};
}

double Error(const std::vector<float>& found, const NpyArray& want, const std::string& what) {
  auto error = MaxAbsError(found, want, what);
  EXPECT_TRUE(error.ok()) << error.status();
  return error.ok() ? *error : 1e9;
}

// A flow request read from a golden stage (owned), with its hop when it is a flow.stream/N.
struct GoldenRequest {
  std::string name;
  std::vector<int32_t> tokens, prompt_tokens;
  std::vector<float> prompt_mel, embedding;
  size_t token_offset = 0;
  bool finalize = true;
  NpyArray mel;
  FlowRequest view() const { return {tokens, prompt_tokens, prompt_mel, embedding}; }
};

class CosyVoice3FlowTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(Parts() + "/manifest.json")) return;
    auto manifest = LoadCheckedBundle(Parts());
    ASSERT_TRUE(manifest.ok()) << manifest.status();
    ASSERT_EQ(manifest->family, Family::kCosyVoice3);
    manifest_ = new BundleManifest(*manifest);
    auto flow = FlowMatcher::Create(*manifest_, Parts(), Config());
    ASSERT_TRUE(flow.ok()) << flow.status();
    flow_ = flow->release();
    auto goldens = LoadGoldens(*manifest_, Parts());
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
    if (flow_ == nullptr) {
      GTEST_SKIP() << "no CosyVoice3 parts at " << Parts()
                   << " (fixture cosyvoice3_tiny, VOXSERVE_COSYVOICE_REF)";
    }
  }

  static onnx::OnnxSessionConfig Config() {
    onnx::OnnxSessionConfig config;
    config.intra_op_threads = 1;
    config.execution_provider = testing::TestExecutionProvider();
    return config;
  }

  static const GoldenStage* Find(const std::string& name) {
    for (const GoldenStage& g : *goldens_) {
      if (g.name == name) return &g;
    }
    return nullptr;
  }

  static GoldenRequest Request(const GoldenStage& g) {
    GoldenRequest r;
    r.name = g.name;
    r.tokens = Ints(Get(g.Input("token")));
    r.prompt_tokens = Ints(Get(g.Input("prompt_token")));
    r.prompt_mel = Get(g.Input("prompt_mel")).floats;
    r.embedding = Get(g.Input("embedding")).floats;
    if (g.name.rfind("flow.stream/", 0) == 0) {
      r.token_offset = static_cast<size_t>(Get(g.Input("token_offset")).ints.at(0));
      r.finalize = Get(g.Input("finalize")).ints.at(0) != 0;
    }
    r.mel = Get(g.Output("mel"));
    return r;
  }

  // flow.stream/0, /1, ... in order.
  static std::vector<GoldenRequest> Hops() {
    std::vector<GoldenRequest> hops;
    for (int n = 0; const GoldenStage* g = Find("flow.stream/" + std::to_string(n)); ++n) {
      hops.push_back(Request(*g));
    }
    EXPECT_GE(hops.size(), 3u);
    return hops;
  }

  static BundleManifest* manifest_;
  static FlowMatcher* flow_;
  static std::vector<GoldenStage>* goldens_;
};
BundleManifest* CosyVoice3FlowTest::manifest_ = nullptr;
FlowMatcher* CosyVoice3FlowTest::flow_ = nullptr;
std::vector<GoldenStage>* CosyVoice3FlowTest::goldens_ = nullptr;

TEST_F(CosyVoice3FlowTest, TheEncoderIsTheEmbeddingThroughThePreLookaheadLayerRepeated) {
  EXPECT_TRUE(flow_->has_stream_encoder());
  EXPECT_TRUE(flow_->has_stream_estimator());
  EXPECT_EQ(flow_->max_tokens(), 0);  // no positional table bounds the DiT flow's encoder
  for (int n : {0, 1}) {
    const GoldenStage* g = Find("flow.encoder/" + std::to_string(n));
    ASSERT_NE(g, nullptr);
    GoldenRequest r = Request(*Find("flow.full/" + std::to_string(n)));
    auto c = flow_->Encode(r.view());
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(c->frames, 2 * static_cast<int>(r.prompt_tokens.size() + r.tokens.size()));
    const double mu = Error(c->mu, Get(g->Output("mu")), g->name + " mu");
    const double spks = Error(c->spks, Get(g->Output("spks")), g->name + " spks");
    EXPECT_LE(mu, kTiny) << g->name;
    EXPECT_LE(spks, kTiny) << g->name;
    std::printf("%s: mu max abs %.3g, spks %.3g (held to %.3g)\n", g->name.c_str(), mu, spks,
                kTiny);
  }
}

TEST_F(CosyVoice3FlowTest, OneCfgPairMatchesUpstreamsDiTWithFullAndWithChunkMaskedAttention) {
  for (int n : {0, 1}) {
    GoldenRequest r = Request(*Find("flow.full/" + std::to_string(n)));
    auto c = flow_->Encode(r.view());
    ASSERT_TRUE(c.ok()) << c.status();
    double full_vs_chunked = 0;
    std::vector<float> full;
    for (bool chunked : {false, true}) {
      const GoldenStage* g =
          Find((chunked ? "flow.estimator_stream/" : "flow.estimator/") + std::to_string(n));
      ASSERT_NE(g, nullptr);
      const NpyArray x = Get(g->Input("x"));  // both rows hold the same noise
      std::vector<float> x0(x.floats.begin(), x.floats.begin() + x.floats.size() / 2);
      auto out = flow_->EstimatorStep(*c, x0, Get(g->Input("t")).floats.at(0), chunked);
      ASSERT_TRUE(out.ok()) << out.status();
      const double error = Error(*out, Get(g->Output("estimator_out")), g->name);
      EXPECT_LE(error, kTiny) << g->name;
      std::printf("%s: max abs %.3g (held to %.3g)\n", g->name.c_str(), error, kTiny);
      if (!chunked) {
        full = *out;
      } else {
        for (size_t i = 0; i < full.size(); ++i) {
          full_vs_chunked = std::max(full_vs_chunked, std::fabs(double{full[i]} - (*out)[i]));
        }
      }
    }
    // Request 1 spans several 50-frame chunks: the mask must change what the DiT attends to
    // (request 0's 84 frames span two as well).
    EXPECT_GT(full_vs_chunked, 1e-3) << "the chunk mask changed nothing: the graphs are alike";
  }
}

TEST_F(CosyVoice3FlowTest, WholeFlowMatchesUpstreamInference) {
  for (int n : {0, 1}) {
    GoldenRequest r = Request(*Find("flow.full/" + std::to_string(n)));
    auto mel = flow_->Run(r.view());
    ASSERT_TRUE(mel.ok()) << mel.status();
    EXPECT_EQ(mel->frames, 2 * static_cast<int>(r.tokens.size()));  // prompt frames cut off
    ASSERT_EQ(r.mel.shape, (std::vector<int64_t>{80, mel->frames}));
    const double error = Error(mel->values, r.mel, r.name);
    EXPECT_LE(error, kTiny) << r.name;
    std::printf("%s: max abs %.3g (held to %.3g)\n", r.name.c_str(), error, kTiny);
  }
}

TEST_F(CosyVoice3FlowTest, StreamEncoderTakesTheLookaheadAsContext) {
  int checked = 0;
  for (const GoldenRequest& h : Hops()) {
    if (h.finalize) continue;
    const GoldenStage* g = Find("flow.stream_encoder/" + h.name.substr(h.name.find('/') + 1));
    ASSERT_NE(g, nullptr) << h.name;
    auto c = flow_->EncodeStream(h.view());
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(c->frames, 2 * static_cast<int>(h.prompt_tokens.size() + h.tokens.size() - 3));
    const double mu = Error(c->mu, Get(g->Output("mu")), g->name + " mu");
    EXPECT_LE(mu, kTiny) << g->name;
    std::printf("%s: mu max abs %.3g (held to %.3g)\n", g->name.c_str(), mu, kTiny);
    ++checked;
  }
  EXPECT_GE(checked, 2);
}

TEST_F(CosyVoice3FlowTest, EachHopMatchesUpstreamsStreamingToken2wav) {
  for (const GoldenRequest& h : Hops()) {
    auto mel = flow_->RunPrefix(h.view(), h.token_offset, h.finalize);
    ASSERT_TRUE(mel.ok()) << h.name << ": " << mel.status();
    const size_t end = h.finalize ? h.tokens.size() : h.tokens.size() - 3;
    EXPECT_EQ(mel->frames, static_cast<int>(2 * (end - h.token_offset))) << h.name;
    ASSERT_EQ(h.mel.shape, (std::vector<int64_t>{80, mel->frames})) << h.name;
    const double error = Error(mel->values, h.mel, h.name);
    EXPECT_LE(error, kTiny) << h.name;
    std::printf("%s: offset %zu, %zu tokens, %s: max abs %.3g (held to %.3g)\n", h.name.c_str(),
                h.token_offset, h.tokens.size(), h.finalize ? "finalize" : "streaming", error,
                kTiny);
  }
}

TEST_F(CosyVoice3FlowTest, StreamsAtOneHopShareTheChunkMaskedEstimatorAndComeOutAsAlone) {
  const std::vector<GoldenRequest> hops = Hops();
  const GoldenRequest& h = hops.at(1);
  std::vector<FlowMatcher::Hop> batch(3, FlowMatcher::Hop{h.view(), h.token_offset, h.finalize});
  const int64_t before = flow_->estimator_calls();
  auto mels = flow_->RunPrefixBatch(batch);
  EXPECT_EQ(flow_->estimator_calls() - before, 10);  // one call per Euler step for all three
  for (const auto& mel : mels) {
    ASSERT_TRUE(mel.ok()) << mel.status();
    EXPECT_LE(Error(mel->values, h.mel, h.name), kTiny);
  }
}

TEST_F(CosyVoice3FlowTest, AStreamEstimatorWhoseRowsAxisDiffersIsRefusedByName) {
  // The CosyVoice2 tiny bundle's estimator takes one fixed CFG pair; the fixture's is dynamic.
  BundleManifest m = *manifest_;
  m.graphs.at("flow_estimator_stream").file =
      (std::filesystem::path(TinyBundle()) / "flow.decoder.estimator.fp32.onnx").string();
  auto flow = FlowMatcher::Create(m, Parts(), Config());
  ASSERT_FALSE(flow.ok());
  EXPECT_EQ(flow.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(flow.status().message().find("flow_estimator_stream"), std::string::npos)
      << flow.status();
}

}  // namespace
}  // namespace voxserve::engine::cosyvoice
