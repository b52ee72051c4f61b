// CosyVoice3's causal HiFT (CausalHiFTGenerator) against upstream's own results on the same tiny
// random weights (fixture cosyvoice3_tiny, export.py --family cosyvoice3): the f0 graph against
// upstream's float64 predictor, the causal source (nearest phase, fixed noise table) on a voiced
// contour, the whole vocoder, and the streaming hops as CosyVoice3Model.token2wav runs them, on
// the bundle's own manifest.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/cosyvoice/bundle_check.h"
#include "engine/cosyvoice/bundle_verifier.h"
#include "engine/cosyvoice/causal_hift_stream.h"
#include "engine/cosyvoice/hift_vocoder.h"
#include "support/test_paths.h"
#include "unit/engine/cosyvoice_bundle/tiny_bundle.h"

namespace voxserve::engine::cosyvoice {
namespace {

using testing::TinyBundle;

std::string Parts() {
  return testing::FixturePath("VOXSERVE_COSYVOICE3_TINY", test_paths::kCosyVoice3Tiny);
}

NpyArray Get(const absl::StatusOr<NpyArray>& array) {
  EXPECT_TRUE(array.ok()) << array.status();
  return array.ok() ? *array : NpyArray{};
}

double Error(const std::vector<float>& found, const NpyArray& want, const std::string& what) {
  auto error = MaxAbsError(found, want, what);
  EXPECT_TRUE(error.ok()) << error.status();
  return error.ok() ? *error : 1e9;
}

class CausalHiftTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(Parts() + "/manifest.json")) return;
    auto manifest = LoadCheckedBundle(Parts());
    ASSERT_TRUE(manifest.ok()) << manifest.status();
    manifest_ = new BundleManifest(*manifest);
    onnx::OnnxSessionConfig config;
    config.intra_op_threads = 1;
    config.execution_provider = testing::TestExecutionProvider();
    auto vocoder = HiftVocoder::Create(*manifest_, Parts(), config);
    ASSERT_TRUE(vocoder.ok()) << vocoder.status();
    vocoder_ = vocoder->release();
    auto goldens = LoadGoldens(*manifest_, Parts());
    ASSERT_TRUE(goldens.ok()) << goldens.status();
    goldens_ = new std::vector<GoldenStage>(std::move(*goldens));
  }
  static void TearDownTestSuite() {
    delete vocoder_;
    delete manifest_;
    delete goldens_;
    vocoder_ = nullptr;
    manifest_ = nullptr;
    goldens_ = nullptr;
  }
  void SetUp() override {
    if (vocoder_ == nullptr) {
      GTEST_SKIP() << "no CosyVoice3 parts at " << Parts()
                   << " (fixture cosyvoice3_tiny, VOXSERVE_COSYVOICE_REF)";
    }
  }

  static const GoldenStage& Stage(const std::string& name) {
    for (const GoldenStage& g : *goldens_) {
      if (g.name == name) return g;
    }
    ADD_FAILURE() << "no golden stage " << name;
    return goldens_->front();
  }

  static BundleManifest* manifest_;
  static HiftVocoder* vocoder_;
  static std::vector<GoldenStage>* goldens_;
};
BundleManifest* CausalHiftTest::manifest_ = nullptr;
HiftVocoder* CausalHiftTest::vocoder_ = nullptr;
std::vector<GoldenStage>* CausalHiftTest::goldens_ = nullptr;

// The f0 graph is float32; upstream runs the predictor in float64 (generator.py:716-717), so
// the difference is the float32 drift the issue asks to measure (printed). 1e-5 is far above it
// on these weights and far below what a wrong context gives.
TEST_F(CausalHiftTest, F0GraphInFloat32StaysWithinDriftOfUpstreamsFloat64Predictor) {
  ASSERT_TRUE(vocoder_->causal());
  for (int n : {0, 1}) {
    const GoldenStage& g = Stage("hift.f0/" + std::to_string(n));
    const NpyArray body = Get(g.Input("mel")), context = Get(g.Input("context"));
    const bool finalize = n == 0;
    // The whole mel: the body, then (non-final) the context frames.
    std::vector<float> mel = body.floats;
    int64_t frames = body.shape.at(2);
    if (!finalize) {
      const int64_t look = context.shape.at(2);
      mel.assign(static_cast<size_t>(80 * (frames + look)), 0.0f);
      for (int b = 0; b < 80; ++b) {
        std::copy_n(body.floats.begin() + b * frames, frames, mel.begin() + b * (frames + look));
        std::copy_n(context.floats.begin() + b * look, look,
                    mel.begin() + b * (frames + look) + frames);
      }
      frames += look;
    }
    auto f0 = vocoder_->CausalF0({mel, frames}, finalize);
    ASSERT_TRUE(f0.ok()) << f0.status();
    const NpyArray want = Get(g.Output("f0"));
    EXPECT_EQ(f0->size(), want.floats.size()) << g.name;
    double peak = 0;
    for (float v : want.floats) peak = std::max(peak, std::fabs(double{v}));
    const double drift = Error(*f0, want, g.name);
    EXPECT_LE(drift, 1e-5) << g.name;
    std::printf("%s (%s): float32 graph vs float64 upstream, max abs %.3g of peak %.3g Hz\n",
                g.name.c_str(), finalize ? "finalize" : "3 frames of context", drift, peak);
  }
}

// Nearest phase upsampling and the fixed table: the same bounds as CosyVoice2's SineGen2 check
// (hift_source_test.cc: float32 phase of ~1e4 rad to ~1e-3 rad, on sines of amplitude 0.1).
TEST_F(CausalHiftTest, CausalSourceMatchesUpstreamOnAVoicedContour) {
  const GoldenStage& g = Stage("hift.source/0");
  const NpyArray f0 = Get(g.Input("f0"));
  const SineSource& source = vocoder_->sine_source();
  ASSERT_TRUE(source.causal());
  SeededSourceNoise unused(1);
  auto excitation = source.Excite(f0.floats, unused);
  ASSERT_TRUE(excitation.ok()) << excitation.status();
  EXPECT_EQ(excitation->uv, Get(g.Output("uv")).floats);
  const double sines = Error(excitation->sines, Get(g.Output("sines")), "sines");
  EXPECT_LT(sines, 5e-4);
  auto merged = source.Merge(excitation->sines);
  ASSERT_TRUE(merged.ok()) << merged.status();
  const double merged_error = Error(*merged, Get(g.Output("source")), "source");
  EXPECT_LT(merged_error, 5e-4);
  std::printf("hift.source/0: sines max abs %.3g, source %.3g\n", sines, merged_error);
}

TEST_F(CausalHiftTest, WholeMelMatchesUpstreamsInference) {
  const GoldenStage& g = Stage("hift.full/0");
  const NpyArray mel = Get(g.Input("mel"));
  auto audio = vocoder_->VocodeCausal({mel.floats, mel.shape.at(1)}, /*finalize=*/true);
  ASSERT_TRUE(audio.ok()) << audio.status();
  EXPECT_EQ(audio->size(), static_cast<size_t>(mel.shape.at(1) * 480));
  const double error = Error(*audio, Get(g.Output("speech")), g.name);
  EXPECT_LE(error, 1e-4);
  std::printf("%s: %zu samples, max abs %.3g\n", g.name.c_str(), audio->size(), error);
}

TEST_F(CausalHiftTest, StreamingHopsMatchUpstreamsToken2wavChunkByChunk) {
  auto stream = CausalHiftStream::Create(*vocoder_);
  ASSERT_TRUE(stream.ok()) << stream.status();
  int hops = 0;
  for (const GoldenStage& g : *goldens_) {
    if (g.name.rfind("hift.stream/", 0) != 0) continue;
    const NpyArray mel = Get(g.Input("mel"));
    const bool finalize = Get(g.Input("finalize")).ints.at(0) != 0;
    auto audio = stream->Push({mel.floats, mel.shape.at(1)}, finalize);
    ASSERT_TRUE(audio.ok()) << g.name << ": " << audio.status();
    const NpyArray want = Get(g.Output("audio"));
    ASSERT_EQ(audio->size(), want.floats.size()) << g.name;
    const double error = Error(*audio, want, g.name);
    EXPECT_LE(error, 1e-4) << g.name;
    std::printf("%s: %zu samples, max abs %.3g\n", g.name.c_str(), audio->size(), error);
    ++hops;
  }
  EXPECT_GE(hops, 3);
  auto after = stream->Push({std::vector<float>(80, 0.0f), 1}, true);
  EXPECT_EQ(after.status().code(), absl::StatusCode::kFailedPrecondition);
}

// The golden mel pushed in chunks of `chunk` frames; the largest difference from vocoding it
// whole, and the most frames one push vocoded.
struct Streamed {
  double error = 0;
  int64_t most_vocoded = 0;
  bool first_push_empty = false;
};

// Only its first `frames` frames (the pushes cost ASan builds seconds).
Streamed StreamInChunks(const HiftVocoder& vocoder, const NpyArray& golden, int64_t frames,
                        int64_t chunk, int64_t left_context) {
  NpyArray mel;
  mel.shape = {80, frames};
  mel.floats.resize(static_cast<size_t>(80 * frames));
  for (int b = 0; b < 80; ++b) {
    std::copy_n(golden.floats.begin() + b * golden.shape.at(1), frames,
                mel.floats.begin() + b * frames);
  }
  auto whole = vocoder.VocodeCausal({mel.floats, frames}, true);
  EXPECT_TRUE(whole.ok());
  auto stream = CausalHiftStream::Create(vocoder, left_context);
  EXPECT_TRUE(stream.ok());
  Streamed out;
  std::vector<float> joined;
  for (int64_t first = 0; first < frames; first += chunk) {
    const int64_t count = std::min<int64_t>(chunk, frames - first);
    std::vector<float> part(static_cast<size_t>(80 * count));
    for (int b = 0; b < 80; ++b) {
      std::copy_n(mel.floats.begin() + b * frames + first, count, part.begin() + b * count);
    }
    auto audio = stream->Push({part, count}, first + count == frames);
    EXPECT_TRUE(audio.ok()) << audio.status();
    if (!audio.ok()) return out;
    if (first == 0) out.first_push_empty = audio->empty();
    out.most_vocoded = std::max(out.most_vocoded, stream->last_vocoded_frames());
    joined.insert(joined.end(), audio->begin(), audio->end());
  }
  EXPECT_EQ(joined.size(), whole->size());
  for (size_t i = 0; i < std::min(joined.size(), whole->size()); ++i) {
    out.error = std::max(out.error, std::fabs(double{joined[i]} - (*whole)[i]));
  }
  return out;
}

TEST_F(CausalHiftTest, ChunksOfAnySizeAddUpToTheWholeMelWithBoundedWork) {
  const NpyArray mel = Get(Stage("hift.full/0").Input("mel"));  // 414 frames
  for (int64_t chunk : {5, 37}) {
    Streamed s = StreamInChunks(*vocoder_, mel, chunk == 5 ? 150 : mel.shape.at(1), chunk,
                                CausalHiftStream::kLeftContextFrames);
    EXPECT_LE(s.error, 1e-5) << chunk;
    // A 5-frame first chunk emits nothing (8 frames of lookahead and drop are needed).
    if (chunk == 5) EXPECT_TRUE(s.first_push_empty);
    // Each push vocodes the frames not yet returned and the left context, not the whole mel.
    EXPECT_LE(s.most_vocoded, CausalHiftStream::kLeftContextFrames + chunk + 8) << chunk;
    std::printf("chunks of %lld: max abs %.3g from the whole mel, at most %lld frames a push\n",
                static_cast<long long>(chunk), s.error, static_cast<long long>(s.most_vocoded));
  }
}

TEST_F(CausalHiftTest, TheLeftContextIsWhatMakesTheChunksExact) {
  const NpyArray mel = Get(Stage("hift.full/0").Input("mel"));
  // Measured on the 414 frames: 2 frames 1.6e-2, 8 7.1e-3, 16 5.1e-5, 24 and more 1.4e-7 (the
  // tiny graphs keep the real kernels, dilations and rates, so the same reach).
  for (int64_t left : {2, 24}) {
    Streamed s = StreamInChunks(*vocoder_, mel, 200, 37, left);
    std::printf("left context %lld frames: max abs %.3g\n", static_cast<long long>(left), s.error);
    if (left == 2) EXPECT_GT(s.error, 1e-3) << "without context the window's start shows";
    if (left == 24) EXPECT_LE(s.error, 1e-5);
  }
}

TEST_F(CausalHiftTest, ABadChunkLeavesTheStreamAsItWas) {
  auto stream = CausalHiftStream::Create(*vocoder_);
  ASSERT_TRUE(stream.ok());
  std::vector<float> bad(80 * 20, 0.0f);
  bad[7] = std::nanf("");
  auto refused = stream->Push({bad, 20}, false);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(stream->frames(), 0);
  auto wrong_shape = stream->Push({std::vector<float>(81, 0.0f), 1}, false);
  EXPECT_EQ(wrong_shape.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(stream->frames(), 0);
}

TEST(CausalHift, CosyVoice2sVocoderHasNoCausalPath) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  auto manifest = LoadBundleManifest(TinyBundle());
  ASSERT_TRUE(manifest.ok());
  auto vocoder = HiftVocoder::Create(*manifest, TinyBundle(), {});
  ASSERT_TRUE(vocoder.ok()) << vocoder.status();
  EXPECT_FALSE((*vocoder)->causal());
  EXPECT_EQ(CausalHiftStream::Create(**vocoder).status().code(),
            absl::StatusCode::kFailedPrecondition);
  std::vector<float> mel(80 * 10, 0.0f);
  EXPECT_EQ((*vocoder)->VocodeCausal({mel, 10}, true).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace voxserve::engine::cosyvoice
