// The events a TTS server takes and sends (reference: wyoming/tts.py, audio.py, info.py,
// error.py, ping.py of the `wyoming` package 1.9.0): what each client event's data holds, and the
// server's events as wire frames (EncodeEvent).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace voxserve::transport::wyoming {

// Event types (wyoming/tts.py, info.py, audio.py, error.py, ping.py).
inline constexpr std::string_view kDescribe = "describe";
inline constexpr std::string_view kInfo = "info";
inline constexpr std::string_view kSynthesize = "synthesize";
inline constexpr std::string_view kSynthesizeStart = "synthesize-start";
inline constexpr std::string_view kSynthesizeChunk = "synthesize-chunk";
inline constexpr std::string_view kSynthesizeStop = "synthesize-stop";
inline constexpr std::string_view kSynthesizeStopped = "synthesize-stopped";
inline constexpr std::string_view kAudioStart = "audio-start";
inline constexpr std::string_view kAudioChunk = "audio-chunk";
inline constexpr std::string_view kAudioStop = "audio-stop";
inline constexpr std::string_view kError = "error";
inline constexpr std::string_view kPing = "ping";
inline constexpr std::string_view kPong = "pong";

// SynthesizeVoice: a name (from info; then an optional speaker of it), else a language, else
// nothing (the default voice). As the reference reads it, a name hides a language.
struct VoiceRequest {
  std::optional<std::string> name;
  std::optional<std::string> speaker;
  std::optional<std::string> language;
};

struct SynthesizeEvent {
  std::string text;
  VoiceRequest voice;
};

// InvalidArgument naming the field ("text", "voice", "voice.name", ...) with code
// "invalid_event" when a field has the wrong type or "text" is missing. "text_format" (ssml) and
// "context" are accepted and not used: the text is read as plain text.
absl::StatusOr<SynthesizeEvent> ParseSynthesize(const nlohmann::json& data);
absl::StatusOr<VoiceRequest> ParseSynthesizeStart(const nlohmann::json& data);
absl::StatusOr<std::string> ParseSynthesizeChunk(const nlohmann::json& data);
// ping's optional text, copied into the pong.
std::optional<std::string> ParsePing(const nlohmann::json& data);

// 16-bit mono PCM, little-endian: the only audio voxserve sends over Wyoming.
inline constexpr int kSampleWidthBytes = 2;
inline constexpr int kChannels = 1;

std::string AudioStartFrame(int sample_rate, int64_t timestamp_ms);
std::string AudioChunkFrame(int sample_rate, std::string_view pcm, int64_t timestamp_ms);
std::string AudioStopFrame(int64_t timestamp_ms);
std::string SynthesizeStoppedFrame();
std::string ErrorFrame(std::string_view text, std::string_view code);
std::string PongFrame(const std::optional<std::string>& text);
std::string InfoFrame(const nlohmann::json& info_data);

}  // namespace voxserve::transport::wyoming
