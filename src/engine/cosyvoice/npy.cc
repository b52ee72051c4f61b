#include "engine/cosyvoice/npy.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_join.h"
#include "core/error.h"

namespace voxserve::engine::cosyvoice {
namespace {

constexpr char kMagic[] = "\x93NUMPY";  // numpy/lib/format.py MAGIC_PREFIX

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

// The value of 'key' in numpy's header dict, e.g. "'<f4'" or "(1, 80, 15000)".
std::string_view DictValue(std::string_view dict, std::string_view key) {
  std::string quoted = "'" + std::string(key) + "':";
  size_t at = dict.find(quoted);
  if (at == std::string_view::npos) return {};
  std::string_view rest = Trim(dict.substr(at + quoted.size()));
  if (rest.empty()) return {};
  char close = rest[0] == '(' ? ')' : rest[0] == '\'' ? '\'' : ',';
  size_t end = rest.find(close, 1);
  if (end == std::string_view::npos) return {};
  return rest.substr(0, close == ',' ? end : end + 1);
}

size_t ElementSize(const std::string& dtype) { return dtype == "int64" ? 8 : 4; }

}  // namespace

size_t NpyArray::size() const {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  return "[" + absl::StrJoin(shape, ", ") + "]";
}

absl::StatusOr<NpyHeader> ReadNpyHeader(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(path + ": cannot be read");
  char prefix[10] = {};
  file.read(prefix, sizeof prefix);
  if (!file || std::memcmp(prefix, kMagic, 6) != 0) {
    return core::InvalidArgument(path + ": not a .npy file");
  }
  int major = static_cast<unsigned char>(prefix[6]);
  uint64_t header_len = 0;
  uint64_t offset = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(prefix[8]) |
                 (static_cast<uint64_t>(static_cast<unsigned char>(prefix[9])) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    char more[2] = {};
    file.read(more, 2);
    header_len = static_cast<unsigned char>(prefix[8]) |
                 (static_cast<uint64_t>(static_cast<unsigned char>(prefix[9])) << 8) |
                 (static_cast<uint64_t>(static_cast<unsigned char>(more[0])) << 16) |
                 (static_cast<uint64_t>(static_cast<unsigned char>(more[1])) << 24);
    offset = 12;
  } else {
    return core::InvalidArgument(path + ": unsupported .npy version " + std::to_string(major));
  }
  if (header_len > 65536) return core::InvalidArgument(path + ": .npy header too long");
  std::string dict(header_len, '\0');
  file.read(dict.data(), static_cast<std::streamsize>(header_len));
  if (!file) return core::InvalidArgument(path + ": truncated .npy header");

  NpyHeader header;
  header.data_offset = offset + header_len;
  std::string_view descr = DictValue(dict, "descr");
  if (descr == "'<f4'") {
    header.dtype = "float32";
  } else if (descr == "'<i4'") {
    header.dtype = "int32";
  } else if (descr == "'<i8'") {
    header.dtype = "int64";
  } else {
    header.dtype = std::string(descr);
  }
  if (DictValue(dict, "fortran_order") != "False") {
    return core::InvalidArgument(path + ": only C-order .npy arrays are supported");
  }
  std::string_view shape = DictValue(dict, "shape");
  if (shape.size() < 2) return core::InvalidArgument(path + ": .npy header has no shape");
  std::string_view dims = shape.substr(1, shape.size() - 2);
  while (!dims.empty()) {
    size_t comma = dims.find(',');
    std::string_view part = Trim(dims.substr(0, comma));
    dims = comma == std::string_view::npos ? std::string_view() : dims.substr(comma + 1);
    if (part.empty()) continue;
    int64_t dim = 0;
    for (char c : part) {
      if (c < '0' || c > '9' || dim > (int64_t{1} << 40)) {
        return core::InvalidArgument(path + ": bad .npy shape " + std::string(shape));
      }
      dim = dim * 10 + (c - '0');
    }
    header.shape.push_back(dim);
  }
  if (header.dtype == "float32" || header.dtype == "int32" || header.dtype == "int64") {
    uint64_t count = 1;
    for (int64_t d : header.shape) count *= static_cast<uint64_t>(d);
    std::error_code error;
    uint64_t size = std::filesystem::file_size(path, error);
    uint64_t want = header.data_offset + count * ElementSize(header.dtype);
    if (error || size < want) {
      return core::InvalidArgument(path + ": truncated (" + std::to_string(size) + " bytes, " +
                                   ShapeString(header.shape) + " " + header.dtype + " needs " +
                                   std::to_string(want) + ")");
    }
  }
  return header;
}

absl::StatusOr<NpyArray> ReadNpy(const std::string& path) {
  auto header = ReadNpyHeader(path);
  if (!header.ok()) return header.status();
  NpyArray array;
  array.dtype = header->dtype;
  array.shape = header->shape;
  if (array.dtype != "float32" && array.dtype != "int32" && array.dtype != "int64") {
    return core::InvalidArgument(path + ": dtype " + array.dtype +
                                 " (expected float32, int32 or int64)");
  }
  std::ifstream file(path, std::ios::binary);
  file.seekg(static_cast<std::streamoff>(header->data_offset));
  size_t n = array.size();
  if (array.dtype == "float32") {
    array.floats.resize(n);
    file.read(reinterpret_cast<char*>(array.floats.data()), static_cast<std::streamsize>(n * 4));
  } else if (array.dtype == "int32") {
    std::vector<int32_t> values(n);
    file.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(n * 4));
    array.ints.assign(values.begin(), values.end());
  } else {
    array.ints.resize(n);
    file.read(reinterpret_cast<char*>(array.ints.data()), static_cast<std::streamsize>(n * 8));
  }
  if (!file) return core::InvalidArgument(path + ": cannot read its data");
  return array;
}

}  // namespace voxserve::engine::cosyvoice
