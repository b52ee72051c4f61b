// The canonical 44-byte WAV header of 16-bit mono PCM, for transports that receive raw PCM and
// hand the caller a WAV file (ws://, wyoming://).
#pragma once

#include <cstddef>
#include <string>

namespace voxserve::client {

// `data_bytes` of PCM follow; a streamed file of unknown length says 0xFFFFFFFF (as the server's
// streamed WAV does).
std::string WavHeader(size_t data_bytes, int sample_rate);
inline constexpr size_t kUnknownWavLength = 0xFFFFFFFF;

}  // namespace voxserve::client
