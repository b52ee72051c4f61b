// Reads the expected arrays make_feature_oracles.py writes (CTest fixture feature_oracles) and
// measures how far the C++ features are from them. Header-only, like audio_test_support.h.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "audio/features/feature_matrix.h"
#include "support/test_paths.h"

namespace voxserve::audio::testing {

// The fixture's output folder (test_paths::kFeatureOracles, set by CMake).
inline std::string OracleDir() { return test_paths::kFeatureOracles; }

// Why the oracles could not be made (torch missing), or nothing when they were.
inline std::optional<std::string> OraclesUnavailable() {
  std::ifstream reason(OracleDir() + "/unavailable.txt");
  if (reason) {
    std::stringstream text;
    text << reason.rdbuf();
    return text.str();
  }
  if (!std::ifstream(OracleDir() + "/names.txt")) {
    return "no oracles in " + OracleDir() + " (run the feature_oracles CTest fixture first)";
  }
  return std::nullopt;
}

inline absl::StatusOr<features::FeatureMatrix> ReadOracle(const std::string& name) {
  const std::string path = OracleDir() + "/" + name + ".f32";
  std::ifstream in(path, std::ios::binary);
  int32_t shape[2] = {0, 0};
  if (!in.read(reinterpret_cast<char*>(shape), sizeof(shape)) || shape[0] < 0 || shape[1] < 0) {
    return absl::NotFoundError(absl::StrCat("cannot read ", path));
  }
  features::FeatureMatrix matrix(shape[0], shape[1]);
  if (!in.read(reinterpret_cast<char*>(matrix.values.data()),
               static_cast<std::streamsize>(matrix.values.size() * sizeof(float)))) {
    return absl::DataLossError(absl::StrCat(path, " is shorter than its shape"));
  }
  return matrix;
}

// max |a - b| over equal-shaped matrices (infinity when the shapes differ).
inline double MaxAbsDifference(const features::FeatureMatrix& a, const features::FeatureMatrix& b) {
  if (a.rows != b.rows || a.cols != b.cols) return INFINITY;
  double worst = 0.0;
  for (std::size_t i = 0; i < a.values.size(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(a.values[i]) - b.values[i]));
  }
  return worst;
}

inline double MaxAbs(const features::FeatureMatrix& a) {
  double peak = 0.0;
  for (float v : a.values) peak = std::max(peak, std::fabs(static_cast<double>(v)));
  return peak;
}

}  // namespace voxserve::audio::testing
