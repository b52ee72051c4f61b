#include "audio/features/window.h"

#include <cmath>
#include <numbers>

namespace voxserve::audio::features {

std::vector<float> HannWindow(int length, bool periodic) {
  std::vector<float> window(length > 0 ? length : 0, 1.0f);
  int denominator = periodic ? length : length - 1;
  if (denominator <= 0) return window;  // torch: a one-point symmetric window is [1]
  for (int n = 0; n < length; ++n) {
    window[n] = static_cast<float>(0.5 - 0.5 * std::cos(2.0 * std::numbers::pi * n / denominator));
  }
  return window;
}

std::vector<float> PoveyWindow(int length) {
  std::vector<float> window = HannWindow(length, /*periodic=*/false);
  for (float& w : window) w = static_cast<float>(std::pow(static_cast<double>(w), 0.85));
  return window;
}

}  // namespace voxserve::audio::features
