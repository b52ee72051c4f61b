// NumPy .npy files (format 1.0-3.0) as the bundle stores its tensors and goldens: little-endian
// float32, int32 or int64, C order. Only what numpy.save writes for such arrays is accepted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace voxserve::engine::cosyvoice {

struct NpyHeader {
  std::string dtype;  // "float32", "int32", "int64", or the file's descr when another type
  std::vector<int64_t> shape;
  uint64_t data_offset = 0;  // bytes from the start of the file to the first element
};

// An array read whole, owned by value: floats for float32, ints for int32 and int64.
struct NpyArray {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<float> floats;
  std::vector<int64_t> ints;

  size_t size() const;
};

// Reads only the header (cheap for the large embedding tables) and checks the file holds as many
// bytes as the header promises. Errors name the file.
absl::StatusOr<NpyHeader> ReadNpyHeader(const std::string& path);
absl::StatusOr<NpyArray> ReadNpy(const std::string& path);

// "[1, 80, 15000]" for messages.
std::string ShapeString(const std::vector<int64_t>& shape);

}  // namespace voxserve::engine::cosyvoice
