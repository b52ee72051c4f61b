#include "transport/grpc/request_options.h"

#include <algorithm>

#include "core/error.h"
#include "service/alignment_estimate.h"

namespace voxserve::transport::grpc {
namespace {

absl::StatusOr<audio::AudioFormat> FromProtoFormat(v1::AudioFormat format,
                                                   audio::AudioFormat default_format) {
  switch (format) {
    case v1::AUDIO_FORMAT_UNSPECIFIED:
      return default_format;
    case v1::AUDIO_FORMAT_PCM:
      return audio::AudioFormat::kPcm;
    case v1::AUDIO_FORMAT_WAV:
      return audio::AudioFormat::kWav;
    case v1::AUDIO_FORMAT_MP3:
      return audio::AudioFormat::kMp3;
    case v1::AUDIO_FORMAT_OPUS:
      return audio::AudioFormat::kOpus;
    case v1::AUDIO_FORMAT_AAC:
      return audio::AudioFormat::kAac;
    case v1::AUDIO_FORMAT_FLAC:
      return audio::AudioFormat::kFlac;
    default:
      break;
  }
  return core::InvalidArgument("format " + std::to_string(static_cast<int>(format)) +
                                   " is not an AudioFormat of voxserve.v1",
                               "format", "invalid_format");
}

}  // namespace

absl::StatusOr<service::SynthesisRequest> ToSynthesisRequest(
    const v1::SynthesisOptions& options, audio::AudioFormat default_format,
    std::chrono::system_clock::time_point call_deadline, int max_timeout_ms) {
  service::SynthesisRequest request;
  request.text_field = "text";
  request.model = options.model();
  request.voice = options.voice();
  request.speed = options.speed() == 0 ? 1.0 : options.speed();
  request.instructions = options.instructions();
  request.voice_mode = options.voice_mode();      // the service checks the name
  request.input_format = options.input_format();  // and this one (docs/ssml.md)
  for (const v1::DictionaryLocator& locator : options.pronunciation_dictionary_locators()) {
    request.dictionaries.push_back({locator.pronunciation_dictionary_id(), locator.version_id()});
  }
  if (options.has_seed()) request.seed = options.seed();
  request.prompt_audio = options.ref_audio();
  request.prompt_text = options.ref_text();
  if (request.prompt_audio.empty() && !request.prompt_text.empty()) {
    return core::InvalidArgument("ref_text needs ref_audio (the recording it transcribes)",
                                 "ref_audio", "missing_audio");
  }
  absl::StatusOr<audio::AudioFormat> format = FromProtoFormat(options.format(), default_format);
  if (!format.ok()) return format.status();
  request.format = *format;

  // Out-of-range values (and over-long instructions) go on to the service, which names the
  // allowed range (service::CheckRequestOptions).
  if (options.timestamps() != v1::TIMESTAMPS_MODE_NONE &&
      options.timestamps() != v1::TIMESTAMPS_MODE_WORD &&
      options.timestamps() != v1::TIMESTAMPS_MODE_CHAR) {
    return core::InvalidArgument("timestamps must be NONE, WORD or CHAR", "timestamps",
                                 "invalid_timestamps");
  }
  if (options.timeout_ms() != 0) request.timeout = std::chrono::milliseconds(options.timeout_ms());
  if (call_deadline != std::chrono::system_clock::time_point::max()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        call_deadline - std::chrono::system_clock::now());
    if (left.count() <= 0) return absl::DeadlineExceededError("the call's deadline has passed");
    left = std::min(left, std::chrono::milliseconds(max_timeout_ms));
    if (!request.timeout) {
      request.timeout = left;
    } else if (request.timeout->count() > 0 && request.timeout->count() <= max_timeout_ms) {
      request.timeout = std::min(*request.timeout, left);
    }
  }
  return request;
}

v1::AudioFormat ToProtoFormat(audio::AudioFormat format) {
  switch (format) {
    case audio::AudioFormat::kPcm:
      return v1::AUDIO_FORMAT_PCM;
    case audio::AudioFormat::kWav:
      return v1::AUDIO_FORMAT_WAV;
    case audio::AudioFormat::kMp3:
      return v1::AUDIO_FORMAT_MP3;
    case audio::AudioFormat::kOpus:
      return v1::AUDIO_FORMAT_OPUS;
    case audio::AudioFormat::kAac:
      return v1::AUDIO_FORMAT_AAC;
    case audio::AudioFormat::kFlac:
      return v1::AUDIO_FORMAT_FLAC;
    case audio::AudioFormat::kUlaw:  // not in the proto (yet): only HTTP and WebSocket offer it
      return v1::AUDIO_FORMAT_UNSPECIFIED;
  }
  return v1::AUDIO_FORMAT_UNSPECIFIED;
}

void FillUsage(const service::SynthesisSummary& summary, v1::Usage* usage) {
  usage->set_input_characters(static_cast<int64_t>(summary.input_chars));
  usage->set_audio_seconds(summary.audio_seconds);
  usage->set_segments(summary.segments);
}

void FillTimings(const service::SynthesisSummary& summary, v1::Timings* timings) {
  timings->set_queue_wait_seconds(summary.queue_wait_seconds);
  timings->set_time_to_first_audio_seconds(summary.time_to_first_audio_seconds.value_or(0));
  timings->set_total_seconds(summary.total_seconds);
}

void FillTimestamps(const service::SegmentTimings& segment, v1::TimestampsMode mode,
                    v1::SegmentTimestamps* out) {
  out->set_segment(static_cast<int32_t>(segment.segment));
  out->set_text(segment.text);
  switch (segment.kind) {
    case audio::TimingsKind::kExact:
      out->set_kind(v1::TIMINGS_KIND_EXACT);
      break;
    case audio::TimingsKind::kEstimated:
      out->set_kind(v1::TIMINGS_KIND_ESTIMATED);
      break;
    case audio::TimingsKind::kNone:
      out->set_kind(v1::TIMINGS_KIND_UNSPECIFIED);
      break;
  }
  out->set_start_seconds(segment.start_s);
  out->set_end_seconds(segment.end_s);
  for (const service::TimedText& entry : mode == v1::TIMESTAMPS_MODE_CHAR
                                             ? service::CharacterEntries(segment)
                                             : service::WordEntries(segment)) {
    v1::TimedText* timed = out->add_entries();
    timed->set_text(entry.text);
    timed->set_start_seconds(entry.start_s);
    timed->set_end_seconds(entry.end_s);
  }
}

}  // namespace voxserve::transport::grpc
