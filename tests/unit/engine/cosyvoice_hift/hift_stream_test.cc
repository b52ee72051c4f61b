#include "engine/cosyvoice/hift_stream.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "unit/engine/cosyvoice_bundle/tiny_bundle.h"
#include "unit/engine/cosyvoice_hift/hift_oracles.h"

namespace voxserve::engine::cosyvoice {
namespace {

using ::testing::HasSubstr;
using testing::InjectedNoise;
using testing::MaxAbsDiff;
using testing::Oracle;
using testing::TinyBundle;
using testing::ZeroNoise;

// Upstream's HiFTGenerator, built by the export tool's builder with the tiny bundle's seed, run
// whole and through CosyVoice2Model.token2wav's streaming code (make_hift_oracles.py), with
// SineGen2's noise recorded per call and injected here in the same order.
class HiftUpstreamTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testing::HaveTinyBundle()) return;
    auto manifest = LoadBundleManifest(TinyBundle());
    ASSERT_TRUE(manifest.ok()) << manifest.status();
    onnx::OnnxSessionConfig config;
    config.intra_op_threads = 1;
    auto vocoder = HiftVocoder::Create(*manifest, TinyBundle(), config);
    ASSERT_TRUE(vocoder.ok()) << vocoder.status();
    vocoder_ = std::move(*vocoder).release();
  }
  static void TearDownTestSuite() {
    delete vocoder_;
    vocoder_ = nullptr;
  }
  void SetUp() override {
    VOXSERVE_REQUIRE_TINY_BUNDLE();
    VOXSERVE_REQUIRE_HIFT_ORACLES();
    ASSERT_NE(vocoder_, nullptr);
    auto weight = ReadNpy(TinyBundle() + "/tensors/hift_source_linear_weight.npy");
    ASSERT_TRUE(weight.ok());
    // The oracle's HiFT must be the bundle's (same builder, same seed).
    ASSERT_EQ(weight->floats, Oracle("hift_linear_weight")) << "oracle HiFT is not the bundle's";
  }
  static HiftVocoder* vocoder_;
};
HiftVocoder* HiftUpstreamTest::vocoder_ = nullptr;

// Audio in [-0.99, 0.99] after decoder graphs run by ORT on our side and by torch upstream, with
// our FFTs: 1.2e-7 measured (whole and every chunk); 1e-4 leaves room for other CPUs' kernels
// and still catches a wrong sample, window or cross-fade (errors of order 1e-2 and more).
constexpr double kAudioTolerance = 1e-4;

TEST_F(HiftUpstreamTest, WholeVocodeMatchesUpstreamInference) {
  std::vector<float> mel = Oracle("stream_mel");  // [80, 170]
  InjectedNoise noise(Oracle("whole_noise"));
  auto out = vocoder_->Vocode({mel, 170}, {}, noise);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(noise.used(), 170u * 480 * 9);
  EXPECT_LT(MaxAbsDiff(out->source, Oracle("whole_source")), 1e-4);
  const double error = MaxAbsDiff(out->audio, Oracle("whole_audio"));
  EXPECT_LT(error, kAudioTolerance) << "max abs error " << error;
}

TEST_F(HiftUpstreamTest, StreamingMatchesUpstreamToken2wavChunkByChunk) {
  std::vector<float> mel = Oracle("stream_mel");
  std::vector<float> bounds = Oracle("stream_bounds");  // 0, 50, 110, 150, 170
  ASSERT_EQ(bounds.size(), 5u);
  InjectedNoise noise(Oracle("stream_noise"));
  auto stream = HiftStream::Create(*vocoder_, 8, 3840);  // model.py:264-265
  ASSERT_TRUE(stream.ok()) << stream.status();
  size_t total = 0;
  for (size_t i = 0; i + 1 < bounds.size(); ++i) {
    const auto begin = static_cast<int64_t>(bounds[i]), end = static_cast<int64_t>(bounds[i + 1]);
    std::vector<float> chunk;
    for (int b = 0; b < 80; ++b) {
      chunk.insert(chunk.end(), mel.begin() + b * 170 + begin, mel.begin() + b * 170 + end);
    }
    auto audio = stream->Push({chunk, end - begin}, /*finalize=*/i + 2 == bounds.size(), noise);
    ASSERT_TRUE(audio.ok()) << audio.status();
    std::vector<float> want = Oracle("stream_audio_" + std::to_string(i));
    ASSERT_EQ(audio->size(), want.size()) << "chunk " << i;
    const double error = MaxAbsDiff(*audio, want);
    EXPECT_LT(error, kAudioTolerance) << "chunk " << i << " max abs error " << error;
    total += audio->size();
  }
  EXPECT_EQ(total, 170u * 480);  // every frame's audio, once
  EXPECT_EQ(noise.used(), Oracle("stream_noise").size());
  ZeroNoise zero;
  std::vector<float> more(80 * 10, 0.0f);
  EXPECT_THAT(stream->Push({more, 10}, true, zero).status().message(), HasSubstr("already"));
}

// Two streams at the same chunks pushed together (the vocoder pool's batch of hops, issue 44):
// each chunk's mels share one decoder call and each stream still matches upstream's token2wav.
TEST_F(HiftUpstreamTest, StreamsPushedTogetherShareTheDecoderAndEachMatchesUpstream) {
  ASSERT_TRUE(vocoder_->batches_rows()) << "export.py writes HiFT graphs with a rows axis";
  std::vector<float> mel = Oracle("stream_mel");
  std::vector<float> bounds = Oracle("stream_bounds");  // 0, 50, 110, 150, 170
  ASSERT_EQ(bounds.size(), 5u);
  InjectedNoise noise_a(Oracle("stream_noise")), noise_b(Oracle("stream_noise"));
  auto a = HiftStream::Create(*vocoder_, 8, 3840);
  auto b = HiftStream::Create(*vocoder_, 8, 3840);
  ASSERT_TRUE(a.ok() && b.ok());
  const int64_t calls = vocoder_->decoder_calls();
  for (size_t i = 0; i + 1 < bounds.size(); ++i) {
    const auto begin = static_cast<int64_t>(bounds[i]), end = static_cast<int64_t>(bounds[i + 1]);
    std::vector<float> chunk;
    for (int bin = 0; bin < 80; ++bin) {
      chunk.insert(chunk.end(), mel.begin() + bin * 170 + begin, mel.begin() + bin * 170 + end);
    }
    const bool finalize = i + 2 == bounds.size();
    const HiftPush pushes[] = {{&*a, {chunk, end - begin}, finalize, &noise_a},
                               {&*b, {chunk, end - begin}, finalize, &noise_b}};
    auto audio = HiftStream::PushBatch(pushes);
    ASSERT_EQ(audio.size(), 2u);
    std::vector<float> want = Oracle("stream_audio_" + std::to_string(i));
    for (auto& one : audio) {
      ASSERT_TRUE(one.ok()) << one.status();
      ASSERT_EQ(one->size(), want.size()) << "chunk " << i;
      EXPECT_LT(MaxAbsDiff(*one, want), kAudioTolerance) << "chunk " << i;
    }
  }
  EXPECT_EQ(vocoder_->decoder_calls() - calls, 4);  // one per chunk; in turn it would be 8
  EXPECT_EQ(noise_a.used(), Oracle("stream_noise").size());
  EXPECT_EQ(noise_b.used(), Oracle("stream_noise").size());
}

// A bad chunk in a batch fails alone; the others' audio and state go on.
TEST_F(HiftUpstreamTest, ABadChunkInABatchFailsAlone) {
  auto good = HiftStream::Create(*vocoder_, 8, 3840);
  auto bad = HiftStream::Create(*vocoder_, 8, 3840);
  ASSERT_TRUE(good.ok() && bad.ok());
  ZeroNoise zero_a, zero_b;
  std::vector<float> chunk(80 * 12, 0.0f), short_chunk(80 * 5, 0.0f);
  const HiftPush pushes[] = {{&*bad, {short_chunk, 5}, false, &zero_b},
                             {&*good, {chunk, 12}, false, &zero_a}};
  auto audio = HiftStream::PushBatch(pushes);
  ASSERT_EQ(audio.size(), 2u);
  EXPECT_THAT(audio[0].status().message(), HasSubstr("at least 8 mel frames"));
  ASSERT_TRUE(audio[1].ok()) << audio[1].status();
  EXPECT_EQ(audio[1]->size(), (12u - 8) * 480);  // the last 8 frames' audio is held back
  auto rest = good->Push({chunk, 12}, true, zero_a);
  ASSERT_TRUE(rest.ok()) << rest.status();
  EXPECT_EQ(rest->size(), (12u + 8) * 480);
}

TEST_F(HiftUpstreamTest, StreamRefusesBadChunksAndSettings) {
  EXPECT_FALSE(HiftStream::Create(*vocoder_, 8, 3000).ok());
  EXPECT_FALSE(HiftStream::Create(*vocoder_, 0, 0).ok());
  auto stream = HiftStream::Create(*vocoder_, 8, 3840);
  ASSERT_TRUE(stream.ok());
  ZeroNoise zero;
  std::vector<float> short_chunk(80 * 5, 0.0f);
  EXPECT_THAT(stream->Push({short_chunk, 5}, false, zero).status().message(),
              HasSubstr("at least 8 mel frames"));
  EXPECT_THAT(stream->Push({short_chunk, 6}, false, zero).status().message(),
              HasSubstr("want [80, 6"));
  // A bad chunk leaves the stream usable.
  std::vector<float> chunk(80 * 12, 0.0f);
  auto first = stream->Push({chunk, 12}, false, zero);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->size(), 12u * 480 - 3840);
}

}  // namespace
}  // namespace voxserve::engine::cosyvoice
