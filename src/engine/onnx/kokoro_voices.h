// Kokoro voice packs: per voice, one 256-float style vector per input length (510 rows in the
// released packs, shape (510, 1, 256)). Read from the files as distributed:
//  - kokoro-onnx's voices-*.bin: a NumPy NPZ (zip of <voice>.npy, float32 little-endian);
//  - onnx-community's voices/ folder: one raw float32 <voice>.bin per voice.
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace voxserve::engine::onnx {

inline constexpr size_t kKokoroStyleDim = 256;

// Immutable after Load; safe cross thread.
class KokoroVoices {
 public:
  // `path`: an NPZ file or a folder of raw .bin files. Errors name the file and what is wrong.
  static absl::StatusOr<KokoroVoices> Load(const std::string& path);

  std::vector<std::string> Names() const;
  bool Contains(std::string_view name) const;
  // The style row for an input of `tokens` phoneme tokens (pads not counted), as kokoro-onnx
  // indexes it (voice[len(tokens)]), clamped to the last row like kokoro.js.
  std::span<const float> Style(std::string_view name, size_t tokens) const;

 private:
  std::map<std::string, std::vector<float>, std::less<>> packs_;  // rows × 256 floats each
};

// Parses one .npy payload (exposed for tests): float32 little-endian, C order, last dim 256.
absl::StatusOr<std::vector<float>> ParseNpyStyles(std::string_view npy, const std::string& where);

}  // namespace voxserve::engine::onnx
