// The response formats clients may ask for (OpenAI's set) and their wire facts.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"

namespace voxserve::audio {

// kUlaw (G.711 mu-law, 8 kHz, no header) is a voxserve extension for telephony: OpenAI has none.
enum class AudioFormat { kMp3, kOpus, kAac, kFlac, kWav, kPcm, kUlaw };

// Accepts OpenAI's names ("mp3", "opus", "aac", "flac", "wav", "pcm") and "ulaw"; the error names
// them all.
absl::StatusOr<AudioFormat> ParseAudioFormat(std::string_view name);
std::string_view FormatName(AudioFormat format);
std::string_view ContentType(AudioFormat format);

// The sample rate a format's output has when the engine produces `input_rate`: pcm is always
// 24 kHz (OpenAI's raw format has no header to say otherwise), opus is 48 kHz, the others keep
// the input rate where the codec supports it and otherwise take the nearest supported rate.
int OutputSampleRate(AudioFormat format, int input_rate);

// A requested rate meaning "the voice's own": pcm, wav and flac keep the engine's rate (within
// [8000, 48000]) instead of their fixed or default one; other formats take OutputSampleRate's.
// For protocols that say the rate in-band (Wyoming's audio-start), so nothing is resampled.
inline constexpr int kVoiceSampleRate = -1;

// The output rate when the client asks for `requested_rate` (0: not asked, OutputSampleRate;
// kVoiceSampleRate: see there).
// Raw and container PCM (pcm, wav) and flac take any rate in [8000, 48000]; mp3 and aac one their
// codec supports; opus only 48 kHz and ulaw only 8 kHz. InvalidArgument (param "sample_rate")
// naming what the format takes otherwise.
absl::StatusOr<int> ResolveOutputSampleRate(AudioFormat format, int input_rate, int requested_rate);

}  // namespace voxserve::audio
