// A dense 2-D array of float features (spectrogram frames, mel filters).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace voxserve::audio::features {

// Owned by value; not thread-safe to mutate. Row-major: element (r, c) is values[r * cols + c].
struct FeatureMatrix {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<float> values;

  FeatureMatrix() = default;
  FeatureMatrix(std::size_t rows_in, std::size_t cols_in)
      : rows(rows_in), cols(cols_in), values(rows_in * cols_in, 0.0f) {}

  float& at(std::size_t row, std::size_t col) { return values[row * cols + col]; }
  float at(std::size_t row, std::size_t col) const { return values[row * cols + col]; }
  std::span<float> row(std::size_t r) { return {values.data() + r * cols, cols}; }
  std::span<const float> row(std::size_t r) const { return {values.data() + r * cols, cols}; }

  // The matrix with rows and columns swapped.
  FeatureMatrix Transposed() const {
    FeatureMatrix out(cols, rows);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t c = 0; c < cols; ++c) out.at(c, r) = at(r, c);
    }
    return out;
  }
};

}  // namespace voxserve::audio::features
