// The sample rates codecs can carry, for choosing an output rate and for writing stream headers.
#pragma once

#include <array>

namespace voxserve::audio {

// MPEG-1 (32/44.1/48 kHz), MPEG-2 (16/22.05/24 kHz) and MPEG-2.5 (8/11.025/12 kHz) layer III.
inline constexpr std::array<int, 9> kMp3SampleRates = {8000,  11025, 12000, 16000, 22050,
                                                       24000, 32000, 44100, 48000};

// ISO/IEC 14496-3's samplingFrequencyIndex table: an ADTS header carries the index, not the rate.
inline constexpr std::array<int, 13> kAacSampleRates = {
    96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350};

}  // namespace voxserve::audio
