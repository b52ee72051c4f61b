// Where the test graphs built by tests/onnx_models/make_test_models.py (the CTest fixture
// onnx_test_models) are, and the rules those graphs follow, restated for assertions.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "support/test_paths.h"

namespace voxserve::engine::onnx::testing {

inline std::string ModelsDir() {
  const char* override_dir = std::getenv("VOXSERVE_TEST_MODELS");
  return override_dir != nullptr ? override_dir : test_paths::kTestModels;
}
inline std::string ModelPath(const std::string& relative) { return ModelsDir() + "/" + relative; }

inline constexpr int kPiperRate = 16000;
inline constexpr int kPiperHop = 256;
inline constexpr int kKokoroFrame = 600;

// Samples the tiny Piper graph makes for one id sequence (see make_test_models.py).
inline size_t PiperSamples(const std::vector<int64_t>& ids, float length_scale, int64_t sid = 0) {
  double frames = 0;
  for (int64_t id : ids) frames += std::ceil(length_scale * static_cast<float>(1 + id % 3));
  return static_cast<size_t>(frames + static_cast<double>(sid)) * kPiperHop;
}

// Samples the tiny Kokoro graph makes for tokens (pads excluded) at `speed`.
inline size_t KokoroSamples(const std::vector<int64_t>& tokens, double speed) {
  double frames = 0;
  for (int64_t t : tokens) frames += std::max(1.0, std::nearbyint((1 + t % 2) / speed));
  return static_cast<size_t>(frames) * kKokoroFrame;
}

}  // namespace voxserve::engine::onnx::testing
