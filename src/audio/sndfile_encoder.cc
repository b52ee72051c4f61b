#include "audio/sndfile_encoder.h"

#include "absl/strings/str_cat.h"
#include "audio/sample_conversion.h"
#include "core/error.h"

namespace voxserve::audio {
namespace {

// In a stream, an Ogg page is written once it holds this much audio. libsndfile's default
// (1000 ms) would hold the tail of every chunk back for up to a second; 50 ms is the lowest it
// accepts and costs about 27 bytes of page header per page (~4 kb/s).
constexpr double kStreamingOggPageLatencyMs = 50.0;

// A streamed MP3 is constant bit rate. Its Xing/Info frame, which would give a VBR stream's
// length, cannot be completed in bytes already sent, and decoders without it estimate the length
// from the first frame's bit rate; at a constant rate that estimate is right. libsndfile picks
// the bit rate from this level by MPEG version: 0.6 gives 64 kb/s at 16–24 kHz (MPEG-2, where
// TTS engines run), 160 kb/s at 32–48 kHz and 32 kb/s at 8–12 kHz (LAME rounds to a legal rate).
constexpr double kStreamingMp3CompressionLevel = 0.6;

absl::StatusOr<int> SndfileFormat(AudioFormat format) {
  switch (format) {
    case AudioFormat::kFlac:
      return SF_FORMAT_FLAC | SF_FORMAT_PCM_16;
    case AudioFormat::kMp3:
      return SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III;
    case AudioFormat::kOpus:
      return SF_FORMAT_OGG | SF_FORMAT_OPUS;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("libsndfile does not encode ", std::string(FormatName(format)), " here"));
  }
}

absl::Status SndfileError(absl::string_view what, absl::string_view message) {
  return core::Internal(absl::StrCat("libsndfile ", what, ": ", message));
}

}  // namespace

absl::StatusOr<std::unique_ptr<SndfileEncoder>> SndfileEncoder::Create(AudioFormat format,
                                                                       int sample_rate,
                                                                       bool streaming) {
  absl::StatusOr<int> sf_format = SndfileFormat(format);
  if (!sf_format.ok()) return sf_format.status();
  SF_INFO info = {};
  info.samplerate = sample_rate;
  info.channels = 1;
  info.format = *sf_format;
  if (!sf_format_check(&info)) {
    return SndfileError("format check", absl::StrCat(std::string(FormatName(format)), " at ",
                                                     sample_rate, " Hz is not supported"));
  }

  std::unique_ptr<SndfileEncoder> encoder(new SndfileEncoder(streaming));
  encoder->file_ =
      sf_open_virtual(SndfileMemoryOutput::VirtualIo(), SFM_WRITE, &info, &encoder->output_);
  if (encoder->file_ == nullptr) return SndfileError("open", sf_strerror(nullptr));

  // Samples arrive clipped (ClipToUnitRange); clipping in libsndfile's own float→int16
  // conversion (FLAC) as well keeps a full-scale sample from ever wrapping around.
  sf_command(encoder->file_, SFC_SET_CLIPPING, nullptr, SF_TRUE);
  if (format == AudioFormat::kOpus && streaming) {
    // libsndfile clamps the value and returns no status for this command; the streaming round
    // trip test checks that pages leave early.
    double latency_ms = kStreamingOggPageLatencyMs;
    sf_command(encoder->file_, SFC_SET_OGG_PAGE_LATENCY_MS, &latency_ms, sizeof(latency_ms));
  }
  if (format == AudioFormat::kMp3 && streaming) {
    // The level first: changing the mode re-derives the bit rate from it.
    double level = kStreamingMp3CompressionLevel;
    int mode = SF_BITRATE_MODE_CONSTANT;
    if (sf_command(encoder->file_, SFC_SET_COMPRESSION_LEVEL, &level, sizeof(level)) != SF_TRUE ||
        sf_command(encoder->file_, SFC_SET_BITRATE_MODE, &mode, sizeof(mode)) != SF_TRUE) {
      return SndfileError("mp3 bit rate", sf_strerror(encoder->file_));
    }
  }
  return encoder;
}

SndfileEncoder::SndfileEncoder(bool streaming) : streaming_(streaming) {}

SndfileEncoder::~SndfileEncoder() {
  if (file_ != nullptr) sf_close(file_);  // abandoned before Finish: the bytes are discarded
}

absl::Status SndfileEncoder::Encode(std::span<const float> samples, std::string* out) {
  if (file_ == nullptr) return absl::FailedPreconditionError("Encode called after Finish");
  if (!samples.empty()) {
    ClipToUnitRange(samples, &clipped_);
    sf_count_t written =
        sf_write_float(file_, clipped_.data(), static_cast<sf_count_t>(clipped_.size()));
    if (written != static_cast<sf_count_t>(clipped_.size())) {
      return SndfileError("write", sf_strerror(file_));
    }
    wrote_samples_ = true;
  }
  if (streaming_) output_.TakeBytes(out);
  return absl::OkStatus();
}

absl::Status SndfileEncoder::Finish(std::string* out) {
  if (file_ == nullptr) return absl::FailedPreconditionError("Finish called twice");
  if (!wrote_samples_) {
    // libsndfile writes FLAC and MP3 headers with the first samples and an Ogg Opus file without
    // audio packets is malformed, so audio of no length becomes one silent sample: a valid file.
    const float silence = 0.0f;
    if (sf_write_float(file_, &silence, 1) != 1) return SndfileError("write", sf_strerror(file_));
  }
  int error = sf_close(file_);
  file_ = nullptr;
  if (error != SF_ERR_NO_ERROR) return SndfileError("close", sf_error_number(error));
  output_.TakeBytes(out);
  return absl::OkStatus();
}

}  // namespace voxserve::audio
