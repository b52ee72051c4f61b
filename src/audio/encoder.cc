#include "audio/encoder.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "audio/aac_encoder.h"
#include "audio/mulaw_encoder.h"
#include "audio/pcm_encoder.h"
#include "audio/resampler.h"
#include "audio/resampling_encoder.h"
#include "audio/sndfile_encoder.h"

namespace voxserve::audio {
namespace {

// Wide enough for any engine; outside it a rate is a configuration mistake, not audio.
constexpr int kMinInputSampleRate = 1000;
constexpr int kMaxInputSampleRate = 384000;

// The encoder for `format` that takes samples at `rate` = OutputSampleRate(format, ...).
absl::StatusOr<std::unique_ptr<AudioEncoder>> CreateCodecEncoder(AudioFormat format, int rate,
                                                                 bool streaming) {
  switch (format) {
    case AudioFormat::kPcm:
      return std::make_unique<PcmEncoder>(PcmEncoder::Container::kNone, rate, streaming);
    case AudioFormat::kWav:
      return std::make_unique<PcmEncoder>(PcmEncoder::Container::kWav, rate, streaming);
    case AudioFormat::kAac:
      return AacEncoder::Create(rate, streaming);
    case AudioFormat::kUlaw:
      return std::make_unique<MulawEncoder>();
    case AudioFormat::kFlac:
    case AudioFormat::kMp3:
    case AudioFormat::kOpus:
      return SndfileEncoder::Create(format, rate, streaming);
  }
  return absl::InvalidArgumentError("unknown audio format");
}

}  // namespace

absl::StatusOr<std::unique_ptr<AudioEncoder>> CreateEncoder(const EncoderOptions& options) {
  if (options.input_sample_rate < kMinInputSampleRate ||
      options.input_sample_rate > kMaxInputSampleRate) {
    return absl::InvalidArgumentError(absl::StrCat("input_sample_rate must be in [",
                                                   kMinInputSampleRate, ", ", kMaxInputSampleRate,
                                                   "], got ", options.input_sample_rate));
  }
  absl::StatusOr<int> resolved = ResolveOutputSampleRate(options.format, options.input_sample_rate,
                                                         options.output_sample_rate);
  if (!resolved.ok()) return resolved.status();
  const int output_rate = *resolved;
  absl::StatusOr<std::unique_ptr<AudioEncoder>> encoder =
      CreateCodecEncoder(options.format, output_rate, options.streaming);
  if (!encoder.ok() || output_rate == options.input_sample_rate) return encoder;

  absl::StatusOr<std::unique_ptr<Resampler>> resampler =
      Resampler::Create(options.input_sample_rate, output_rate);
  if (!resampler.ok()) return resampler.status();
  return std::make_unique<ResamplingEncoder>(std::move(*resampler), std::move(*encoder));
}

}  // namespace voxserve::audio
