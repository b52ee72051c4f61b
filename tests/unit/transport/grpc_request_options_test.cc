#include "core/error.h"
#include "gtest/gtest.h"
#include "transport/grpc/request_options.h"

namespace voxserve::transport::grpc {
namespace {

using std::chrono::milliseconds;
using std::chrono::system_clock;

constexpr int kMaxTimeoutMs = 600'000;
const system_clock::time_point kNoDeadline = system_clock::time_point::max();

service::SynthesisRequest Convert(const v1::SynthesisOptions& options,
                                  system_clock::time_point deadline = kNoDeadline) {
  return ToSynthesisRequest(options, audio::AudioFormat::kWav, deadline, kMaxTimeoutMs).value();
}

TEST(GrpcRequestOptions, EmptyOptionsMeanTheDefaults) {
  service::SynthesisRequest request = Convert({});
  EXPECT_EQ(request.format, audio::AudioFormat::kWav);
  EXPECT_EQ(request.speed, 1.0);
  EXPECT_FALSE(request.timeout.has_value());
  EXPECT_EQ(request.text_field, "text");
}

TEST(GrpcRequestOptions, CopiesWhatWasGiven) {
  v1::SynthesisOptions options;
  options.set_model("tts-1");
  options.set_voice("alloy");
  options.set_format(v1::AUDIO_FORMAT_OPUS);
  options.set_speed(1.5);
  options.set_timeout_ms(2500);
  service::SynthesisRequest request = Convert(options);
  EXPECT_EQ(request.model, "tts-1");
  EXPECT_EQ(request.voice, "alloy");
  EXPECT_EQ(request.format, audio::AudioFormat::kOpus);
  EXPECT_EQ(request.speed, 1.5);
  EXPECT_EQ(request.timeout, milliseconds(2500));
}

TEST(GrpcRequestOptions, CopiesVoiceModeInstructionsAndSeedWhenSet) {
  EXPECT_FALSE(Convert({}).seed.has_value());  // the seed oneof: unset is not 0
  v1::SynthesisOptions options;
  options.set_voice_mode("cross_lingual");
  options.set_instructions("Speak calmly.");
  options.set_seed(0);
  service::SynthesisRequest request = Convert(options);
  EXPECT_EQ(request.voice_mode, "cross_lingual");
  EXPECT_EQ(request.instructions, "Speak calmly.");
  EXPECT_EQ(request.seed, 0u);
}

TEST(GrpcRequestOptions, CopiesAnInlinePromptAndRefusesATranscriptWithoutOne) {
  v1::SynthesisOptions options;
  options.set_ref_audio(std::string("RIFF\0\1", 6));
  options.set_ref_text("Hello there.");
  service::SynthesisRequest request = Convert(options);
  EXPECT_EQ(request.prompt_audio, std::string("RIFF\0\1", 6));
  EXPECT_EQ(request.prompt_text, "Hello there.");
  v1::SynthesisOptions text_only;
  text_only.set_ref_text("Hello there.");
  absl::StatusOr<service::SynthesisRequest> refused =
      ToSynthesisRequest(text_only, audio::AudioFormat::kWav, kNoDeadline, kMaxTimeoutMs);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(core::DetailOf(refused.status()).param, "ref_audio");
}

TEST(GrpcRequestOptions, AnUnknownFormatIsInvalidArgument) {
  v1::SynthesisOptions options;
  options.set_format(static_cast<v1::AudioFormat>(42));
  absl::StatusOr<service::SynthesisRequest> request =
      ToSynthesisRequest(options, audio::AudioFormat::kWav, kNoDeadline, kMaxTimeoutMs);
  EXPECT_EQ(request.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(GrpcRequestOptions, TheCallDeadlineBecomesTheTimeout) {
  service::SynthesisRequest request = Convert({}, system_clock::now() + milliseconds(5000));
  ASSERT_TRUE(request.timeout.has_value());
  EXPECT_GT(request.timeout->count(), 4000);
  EXPECT_LE(request.timeout->count(), 5000);
}

TEST(GrpcRequestOptions, TheEarlierOfDeadlineAndTimeoutWins) {
  v1::SynthesisOptions options;
  options.set_timeout_ms(100);
  EXPECT_EQ(Convert(options, system_clock::now() + milliseconds(5000)).timeout, milliseconds(100));
  options.set_timeout_ms(60'000);
  EXPECT_LE(Convert(options, system_clock::now() + milliseconds(5000)).timeout->count(), 5000);
}

TEST(GrpcRequestOptions, AFarDeadlineIsCappedAtTheServersLimit) {
  service::SynthesisRequest request = Convert({}, system_clock::now() + std::chrono::hours(24));
  EXPECT_EQ(request.timeout, milliseconds(kMaxTimeoutMs));
}

TEST(GrpcRequestOptions, APassedDeadlineIsDeadlineExceeded) {
  absl::StatusOr<service::SynthesisRequest> request = ToSynthesisRequest(
      {}, audio::AudioFormat::kWav, system_clock::now() - milliseconds(1), kMaxTimeoutMs);
  EXPECT_EQ(request.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(GrpcRequestOptions, AnOutOfRangeTimeoutIsLeftForTheServiceToRefuse) {
  v1::SynthesisOptions options;
  options.set_timeout_ms(-5);
  EXPECT_EQ(Convert(options, system_clock::now() + milliseconds(5000)).timeout, milliseconds(-5));
}

}  // namespace
}  // namespace voxserve::transport::grpc
