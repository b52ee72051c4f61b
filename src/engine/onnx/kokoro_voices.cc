#include "engine/onnx/kokoro_voices.h"

#include <zip.h>

#include <charconv>
#include <cstring>
#include <filesystem>
#include <memory>

#include "core/error.h"
#include "core/read_file.h"

namespace voxserve::engine::onnx {
namespace {

namespace fs = std::filesystem;

absl::Status Bad(const std::string& where, const std::string& what) {
  return core::InvalidArgument("voices " + where + ": " + what);
}

absl::StatusOr<std::vector<float>> FloatsFromBytes(std::string_view bytes,
                                                   const std::string& where) {
  if (bytes.empty() || bytes.size() % (kKokoroStyleDim * sizeof(float)) != 0) {
    return Bad(where, std::to_string(bytes.size()) +
                          " bytes is not a whole number of 256-float style rows");
  }
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), bytes.size());  // x86-64 is little-endian like the files
  return values;
}

absl::StatusOr<std::string> ReadFile(const fs::path& path) {
  auto bytes = core::ReadFile(path);
  if (!bytes) return absl::NotFoundError("voices file " + path.string() + " cannot be read");
  return *std::move(bytes);
}

struct ZipCloser {
  void operator()(zip_t* z) const { zip_discard(z); }
};
struct ZipFileCloser {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};

absl::Status LoadNpz(const std::string& path,
                     std::map<std::string, std::vector<float>, std::less<>>& packs) {
  int error = 0;
  std::unique_ptr<zip_t, ZipCloser> archive(zip_open(path.c_str(), ZIP_RDONLY, &error));
  if (!archive) {
    zip_error_t z;
    zip_error_init_with_code(&z, error);
    std::string message = zip_error_strerror(&z);
    zip_error_fini(&z);
    return Bad(path, "not a readable NPZ (zip) file: " + message);
  }
  zip_int64_t entries = zip_get_num_entries(archive.get(), 0);
  for (zip_int64_t i = 0; i < entries; ++i) {
    zip_stat_t stat;
    if (zip_stat_index(archive.get(), static_cast<zip_uint64_t>(i), 0, &stat) != 0) continue;
    std::string name = stat.name;
    if (name.size() < 5 || name.substr(name.size() - 4) != ".npy") continue;
    std::unique_ptr<zip_file_t, ZipFileCloser> file(
        zip_fopen_index(archive.get(), static_cast<zip_uint64_t>(i), 0));
    if (!file) return Bad(path, "entry " + name + " cannot be opened");
    std::string bytes(stat.size, '\0');
    zip_int64_t got = zip_fread(file.get(), bytes.data(), stat.size);
    if (got < 0 || static_cast<zip_uint64_t>(got) != stat.size) {
      return Bad(path, "entry " + name + " is truncated");
    }
    auto styles = ParseNpyStyles(bytes, path + ":" + name);
    if (!styles.ok()) return styles.status();
    packs[name.substr(0, name.size() - 4)] = std::move(*styles);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<float>> ParseNpyStyles(std::string_view npy, const std::string& where) {
  // Format: "\x93NUMPY", major, minor, header length (2 bytes in v1, 4 in v2/v3), then a
  // Python dict literal such as {'descr': '<f4', 'fortran_order': False, 'shape': (510, 1, 256), }.
  if (npy.size() < 10 || npy.substr(0, 6) != "\x93NUMPY") return Bad(where, "not a .npy array");
  const auto major = static_cast<unsigned char>(npy[6]);
  size_t header_length = static_cast<unsigned char>(npy[8]) |
                         static_cast<size_t>(static_cast<unsigned char>(npy[9])) << 8;
  size_t offset = 10;
  if (major >= 2) {
    if (npy.size() < 12) return Bad(where, "truncated .npy header");
    header_length |= static_cast<size_t>(static_cast<unsigned char>(npy[10])) << 16 |
                     static_cast<size_t>(static_cast<unsigned char>(npy[11])) << 24;
    offset = 12;
  }
  if (offset + header_length > npy.size()) return Bad(where, "truncated .npy header");
  std::string_view header = npy.substr(offset, header_length);
  if (header.find("'descr': '<f4'") == std::string_view::npos) {
    return Bad(where, "expected float32 little-endian ('<f4') values");
  }
  if (header.find("'fortran_order': False") == std::string_view::npos) {
    return Bad(where, "expected a C-ordered array");
  }
  size_t shape_at = header.find("'shape': (");
  size_t shape_end = header.find(')', shape_at);
  if (shape_at == std::string_view::npos || shape_end == std::string_view::npos) {
    return Bad(where, "the .npy header has no shape");
  }
  std::string_view shape = header.substr(shape_at + 10, shape_end - shape_at - 10);
  std::vector<size_t> dims;
  for (size_t start = 0; start < shape.size();) {
    size_t comma = std::min(shape.find(',', start), shape.size());
    std::string_view item = shape.substr(start, comma - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) {
      size_t dim = 0;
      auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), dim);
      if (ec != std::errc() || end != item.data() + item.size()) {
        return Bad(where, "unreadable shape (" + std::string(shape) + ")");
      }
      dims.push_back(dim);
    }
    start = comma + 1;
  }
  if (dims.empty() || dims.back() != kKokoroStyleDim) {
    return Bad(where, "shape (" + std::string(shape) + ") does not end in the style size 256");
  }
  size_t count = 1;
  for (size_t dim : dims) count *= dim;
  if (npy.size() - offset - header_length != count * sizeof(float)) {
    return Bad(where, "data size does not match shape (" + std::string(shape) + ")");
  }
  return FloatsFromBytes(npy.substr(offset + header_length), where);
}

absl::StatusOr<KokoroVoices> KokoroVoices::Load(const std::string& path) {
  KokoroVoices voices;
  std::error_code error;
  if (fs::is_directory(path, error)) {
    for (const auto& entry : fs::directory_iterator(path, error)) {
      if (entry.path().extension() != ".bin") continue;
      auto bytes = ReadFile(entry.path());
      if (!bytes.ok()) return bytes.status();
      auto styles = FloatsFromBytes(*bytes, entry.path().string());
      if (!styles.ok()) return styles.status();
      voices.packs_[entry.path().stem().string()] = std::move(*styles);
    }
  } else if (fs::is_regular_file(path, error)) {
    if (absl::Status status = LoadNpz(path, voices.packs_); !status.ok()) return status;
  } else {
    return absl::NotFoundError("voices file " + path + " does not exist");
  }
  if (voices.packs_.empty()) return Bad(path, "holds no voices");
  return voices;
}

std::vector<std::string> KokoroVoices::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, pack] : packs_) names.push_back(name);
  return names;
}

bool KokoroVoices::Contains(std::string_view name) const { return packs_.contains(name); }

std::span<const float> KokoroVoices::Style(std::string_view name, size_t tokens) const {
  auto it = packs_.find(name);
  if (it == packs_.end()) return {};
  const std::vector<float>& pack = it->second;
  size_t rows = pack.size() / kKokoroStyleDim;
  size_t row = std::min(tokens, rows - 1);
  return std::span<const float>(pack).subspan(row * kKokoroStyleDim, kKokoroStyleDim);
}

}  // namespace voxserve::engine::onnx
