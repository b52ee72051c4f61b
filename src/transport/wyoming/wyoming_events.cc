#include "transport/wyoming/wyoming_events.h"

#include "core/error.h"
#include "transport/wyoming/wyoming_frame.h"

namespace voxserve::transport::wyoming {
namespace {

using nlohmann::json;

absl::Status WrongType(const std::string& field, const char* expected) {
  return core::InvalidArgument(field + " must be " + expected, field, "invalid_event");
}

// Absent or null: nothing.
const json* Field(const json& object, const char* name) {
  auto it = object.find(name);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

absl::Status ReadOptionalString(const json& object, const char* name, const std::string& where,
                                std::optional<std::string>* out) {
  const json* value = Field(object, name);
  if (value == nullptr) return absl::OkStatus();
  if (!value->is_string()) return WrongType(where, "a string");
  *out = value->get<std::string>();
  return absl::OkStatus();
}

// wyoming/tts.py SynthesizeVoice.from_dict: "name" (with "speaker"), else "language".
absl::StatusOr<VoiceRequest> ReadVoice(const json& data) {
  VoiceRequest voice;
  const json* field = Field(data, "voice");
  if (field == nullptr) return voice;
  if (!field->is_object()) return WrongType("voice", "an object");
  if (field->contains("name")) {
    if (auto s = ReadOptionalString(*field, "name", "voice.name", &voice.name); !s.ok()) return s;
    if (auto s = ReadOptionalString(*field, "speaker", "voice.speaker", &voice.speaker); !s.ok()) {
      return s;
    }
    return voice;
  }
  if (auto s = ReadOptionalString(*field, "language", "voice.language", &voice.language); !s.ok()) {
    return s;
  }
  return voice;
}

absl::StatusOr<std::string> ReadText(const json& data) {
  const json* text = Field(data, "text");
  if (text == nullptr) {
    return core::InvalidArgument("text is required", "text", "invalid_event");
  }
  if (!text->is_string()) return WrongType("text", "a string");
  return text->get<std::string>();
}

json AudioFormat(int sample_rate) {
  return {{"rate", sample_rate}, {"width", kSampleWidthBytes}, {"channels", kChannels}};
}

}  // namespace

absl::StatusOr<SynthesizeEvent> ParseSynthesize(const json& data) {
  SynthesizeEvent event;
  absl::StatusOr<std::string> text = ReadText(data);
  if (!text.ok()) return text.status();
  event.text = *std::move(text);
  absl::StatusOr<VoiceRequest> voice = ReadVoice(data);
  if (!voice.ok()) return voice.status();
  event.voice = *std::move(voice);
  return event;
}

absl::StatusOr<VoiceRequest> ParseSynthesizeStart(const json& data) { return ReadVoice(data); }

absl::StatusOr<std::string> ParseSynthesizeChunk(const json& data) { return ReadText(data); }

std::optional<std::string> ParsePing(const json& data) {
  const json* text = Field(data, "text");
  if (text == nullptr || !text->is_string()) return std::nullopt;
  return text->get<std::string>();
}

std::string AudioStartFrame(int sample_rate, int64_t timestamp_ms) {
  json data = AudioFormat(sample_rate);
  data["timestamp"] = timestamp_ms;
  return EncodeEvent(kAudioStart, data);
}

std::string AudioChunkFrame(int sample_rate, std::string_view pcm, int64_t timestamp_ms) {
  json data = AudioFormat(sample_rate);
  data["timestamp"] = timestamp_ms;
  return EncodeEvent(kAudioChunk, data, pcm);
}

std::string AudioStopFrame(int64_t timestamp_ms) {
  return EncodeEvent(kAudioStop, {{"timestamp", timestamp_ms}});
}

std::string SynthesizeStoppedFrame() { return EncodeEvent(kSynthesizeStopped); }

std::string ErrorFrame(std::string_view text, std::string_view code) {
  return EncodeEvent(kError, {{"text", std::string(text)}, {"code", std::string(code)}});
}

std::string PongFrame(const std::optional<std::string>& text) {
  return EncodeEvent(kPong, {{"text", text ? json(*text) : json(nullptr)}});
}

std::string InfoFrame(const json& info_data) { return EncodeEvent(kInfo, info_data); }

}  // namespace voxserve::transport::wyoming
