// The tensors make_hift_oracles.py writes from upstream's code (CTest fixture hift_oracles), and
// helpers shared by the HiFT tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "engine/cosyvoice/hift_source.h"
#include "engine/cosyvoice/npy.h"
#include "support/test_paths.h"

namespace voxserve::engine::cosyvoice::testing {

inline std::string HiftOracles() {
  const char* dir = std::getenv("VOXSERVE_HIFT_ORACLES");
  return dir != nullptr ? dir : test_paths::kHiftOracles;
}

inline bool HaveHiftOracles() {
  return std::filesystem::exists(std::filesystem::path(HiftOracles()) / "istft_audio.npy");
}

#define VOXSERVE_REQUIRE_HIFT_ORACLES()                                                           \
  if (!::voxserve::engine::cosyvoice::testing::HaveHiftOracles()) {                               \
    GTEST_SKIP() << "no HiFT oracle tensors at "                                                  \
                 << ::voxserve::engine::cosyvoice::testing::HiftOracles()                         \
                 << " (fixture hift_oracles needs VOXSERVE_COSYVOICE_REF, an upstream checkout)"; \
  }

inline std::vector<float> Oracle(const std::string& name) {
  auto array = ReadNpy(HiftOracles() + "/" + name + ".npy");
  EXPECT_TRUE(array.ok()) << array.status();
  return array.ok() ? array->floats : std::vector<float>{};
}

inline double MaxAbsDiff(std::span<const float> a, std::span<const float> b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    worst = std::max(worst, std::abs(double(a[i]) - b[i]));
  }
  return worst;
}

// Hands out given values in order: injects the noise upstream drew.
class InjectedNoise final : public SourceNoise {
 public:
  explicit InjectedNoise(std::vector<float> values) : values_(std::move(values)) {}
  void FillNormal(std::span<float> out) override {
    for (float& x : out) x = next_ < values_.size() ? values_[next_++] : NAN;
  }
  size_t used() const { return next_; }

 private:
  std::vector<float> values_;
  size_t next_ = 0;
};

class ZeroNoise final : public SourceNoise {
 public:
  void FillNormal(std::span<float> out) override { std::fill(out.begin(), out.end(), 0.0f); }
};

}  // namespace voxserve::engine::cosyvoice::testing
