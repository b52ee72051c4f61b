// The response formats clients may ask for (OpenAI's set) and their wire facts.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"

namespace voxserve::audio {

enum class AudioFormat { kMp3, kOpus, kAac, kFlac, kWav, kPcm };

// Accepts OpenAI's names ("mp3", "opus", "aac", "flac", "wav", "pcm"); the error names them all.
absl::StatusOr<AudioFormat> ParseAudioFormat(std::string_view name);
std::string_view FormatName(AudioFormat format);
std::string_view ContentType(AudioFormat format);

// The sample rate a format's output has when the engine produces `input_rate`: pcm is always
// 24 kHz (OpenAI's raw format has no header to say otherwise), opus is 48 kHz, the others keep
// the input rate where the codec supports it and otherwise take the nearest supported rate.
int OutputSampleRate(AudioFormat format, int input_rate);

}  // namespace voxserve::audio
