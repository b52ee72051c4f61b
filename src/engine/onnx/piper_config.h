// A Piper voice's `.onnx.json`: sample rate, espeak voice, phoneme → id map, inference scales and
// speakers. Keys and defaults as Piper's own readers use them (rhasspy/piper's C++ and
// OHF-Voice/piper1-gpl's config.py).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace voxserve::engine::onnx {

using PhonemeIdMap = std::map<char32_t, std::vector<int64_t>>;
using PhonemeMap = std::map<char32_t, std::u32string>;

// Piper's reserved symbols in every phoneme_id_map.
inline constexpr char32_t kPiperPad = U'_';
inline constexpr char32_t kPiperBos = U'^';
inline constexpr char32_t kPiperEos = U'$';

struct PiperVoiceConfig {
  std::string dataset;                  // "dataset": the voice's name, e.g. "lessac"
  std::string quality;                  // "audio.quality": x_low, low, medium, high
  int sample_rate = 22050;              // "audio.sample_rate"
  std::string espeak_voice = "en-us";   // "espeak.voice"
  std::string language;                 // "language.code" as a lower-case tag ("en_US" → "en-us")
  std::string phoneme_type = "espeak";  // espeak (IPA from espeak-ng) | text (the text's letters)
  PhonemeIdMap phoneme_id_map;  // "phoneme_id_map": one code point → ids (values are lists)
  PhonemeMap phoneme_map;       // "phoneme_map": code point → replacement code points
  float noise_scale = 0.667f;   // "inference.noise_scale"
  float length_scale = 1.0f;    // "inference.length_scale" (larger = slower)
  float noise_w = 0.8f;         // "inference.noise_w"
  int num_speakers = 1;         // "num_speakers"
  std::map<std::string, int64_t> speaker_id_map;  // "speaker_id_map": name → sid
  int hop_length = 256;  // samples per duration frame (piper1-gpl "hop_length")

  // Parses the JSON text of `path` (named in errors).
  static absl::StatusOr<PiperVoiceConfig> Parse(const std::string& json_text,
                                                const std::string& path);
  static absl::StatusOr<PiperVoiceConfig> Load(const std::string& path);

  // Errors name the key and what is expected.
  absl::Status Validate() const;
};

}  // namespace voxserve::engine::onnx
