#include "audio/aac_encoder.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
}

#include <algorithm>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "audio/adts_header.h"
#include "audio/sample_conversion.h"
#include "core/error.h"

namespace voxserve::audio {
namespace {

// 64 kb/s mono AAC-LC is clean for speech at the 16–24 kHz rates engines produce. AAC caps a
// channel at 6144 bits per 1024-sample frame, which is less than that below 10.7 kHz.
constexpr std::int64_t kBitRate = 64000;
constexpr std::int64_t kMaxBitsPerFrame = 6144;
constexpr std::int64_t kSamplesPerFrame = 1024;

absl::Status AvError(absl::string_view what, int error) {
  char message[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(error, message, sizeof(message));
  return core::Internal(absl::StrCat("libavcodec aac ", what, ": ", message));
}

// libavcodec logs to stderr, and the aac encoder prints its average quantizer at INFO level
// whenever it closes: a line per request. Unless the program already chose a level, keep only
// warnings and errors.
void QuietenLibavLogOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (av_log_get_level() == AV_LOG_INFO) av_log_set_level(AV_LOG_WARNING);
  });
}

}  // namespace

absl::StatusOr<std::unique_ptr<AacEncoder>> AacEncoder::Create(int sample_rate, bool streaming) {
  absl::StatusOr<int> index = AacSamplingFrequencyIndex(sample_rate);
  if (!index.ok()) return index.status();
  const AVCodec* codec = avcodec_find_encoder_by_name("aac");
  if (codec == nullptr) return core::Internal("libavcodec has no \"aac\" encoder");
  QuietenLibavLogOnce();

  std::unique_ptr<AacEncoder> encoder(new AacEncoder(*index, streaming));
  encoder->context_ = avcodec_alloc_context3(codec);
  encoder->frame_ = av_frame_alloc();
  encoder->packet_ = av_packet_alloc();
  if (encoder->context_ == nullptr || encoder->frame_ == nullptr || encoder->packet_ == nullptr) {
    return core::Internal("libavcodec aac: out of memory");
  }
  AVCodecContext* context = encoder->context_;
  context->sample_fmt = AV_SAMPLE_FMT_FLTP;  // the native encoder's only input format
  context->sample_rate = sample_rate;
  context->time_base = AVRational{1, sample_rate};
  context->bit_rate = std::min(kBitRate, kMaxBitsPerFrame * sample_rate / kSamplesPerFrame);
  context->profile = FF_PROFILE_AAC_LOW;  // what the ADTS header declares
  av_channel_layout_default(&context->ch_layout, 1);
  if (int error = avcodec_open2(context, codec, nullptr); error < 0) return AvError("open", error);

  AVFrame* frame = encoder->frame_;
  frame->format = context->sample_fmt;
  frame->sample_rate = sample_rate;
  frame->nb_samples = context->frame_size;
  if (int error = av_channel_layout_copy(&frame->ch_layout, &context->ch_layout); error < 0) {
    return AvError("frame layout", error);
  }
  if (int error = av_frame_get_buffer(frame, 0); error < 0) return AvError("frame buffer", error);
  return encoder;
}

AacEncoder::AacEncoder(int sampling_frequency_index, bool streaming)
    : sampling_frequency_index_(sampling_frequency_index), streaming_(streaming) {}

AacEncoder::~AacEncoder() {
  av_packet_free(&packet_);
  av_frame_free(&frame_);
  avcodec_free_context(&context_);
}

absl::Status AacEncoder::Encode(std::span<const float> samples, std::string* out) {
  if (finished_) return absl::FailedPreconditionError("Encode called after Finish");
  ClipToUnitRange(samples, &clipped_);
  pending_.insert(pending_.end(), clipped_.begin(), clipped_.end());
  auto frame_size = static_cast<std::size_t>(context_->frame_size);
  std::size_t sent = 0;
  for (; pending_.size() - sent >= frame_size; sent += frame_size) {
    if (absl::Status status = SendFrame(pending_.data() + sent, frame_size); !status.ok()) {
      return status;
    }
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(sent));
  if (streaming_) {
    *out += encoded_;
    encoded_.clear();
  }
  return absl::OkStatus();
}

absl::Status AacEncoder::Finish(std::string* out) {
  if (finished_) return absl::FailedPreconditionError("Finish called twice");
  finished_ = true;
  // The encoder takes a short last frame (AV_CODEC_CAP_SMALL_LAST_FRAME) and pads it itself.
  if (!pending_.empty()) {
    if (absl::Status status = SendFrame(pending_.data(), pending_.size()); !status.ok()) {
      return status;
    }
    pending_.clear();
  }
  if (int error = avcodec_send_frame(context_, nullptr); error < 0) return AvError("drain", error);
  if (absl::Status status = ReceivePackets(); !status.ok()) return status;
  *out += encoded_;
  encoded_.clear();
  return absl::OkStatus();
}

absl::Status AacEncoder::SendFrame(const float* samples, std::size_t count) {
  // The encoder may still hold a reference to the last frame's buffer.
  if (int error = av_frame_make_writable(frame_); error < 0) return AvError("frame", error);
  frame_->nb_samples = static_cast<int>(count);
  frame_->pts = next_pts_;
  next_pts_ += static_cast<std::int64_t>(count);
  std::copy_n(samples, count, reinterpret_cast<float*>(frame_->data[0]));
  if (int error = avcodec_send_frame(context_, frame_); error < 0) return AvError("encode", error);
  return ReceivePackets();
}

absl::Status AacEncoder::ReceivePackets() {
  while (true) {
    int error = avcodec_receive_packet(context_, packet_);
    if (error == AVERROR(EAGAIN) || error == AVERROR_EOF) return absl::OkStatus();
    if (error < 0) return AvError("receive", error);
    absl::Status status = AppendAdtsHeader(sampling_frequency_index_,
                                           static_cast<std::size_t>(packet_->size), &encoded_);
    if (status.ok()) encoded_.append(reinterpret_cast<const char*>(packet_->data), packet_->size);
    av_packet_unref(packet_);
    if (!status.ok()) return status;
  }
}

}  // namespace voxserve::audio
