#include "store/voice_file.h"

#include <array>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "nlohmann/json.hpp"

namespace voxserve::store {
namespace {

using json = nlohmann::json;
using engine::ProfileTensor;

// A profile tensor has a handful of dimensions (CosyVoice's largest is 2); more is a foreign file.
constexpr size_t kMaxDims = 8;

void PutU32(std::string& out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}
void PutU64(std::string& out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}
uint64_t GetLe(std::string_view bytes, size_t offset, int width) {
  uint64_t value = 0;
  for (int i = 0; i < width; ++i) {
    value |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[offset + i])) << (8 * i);
  }
  return value;
}

// Element values as little-endian bytes, whatever the host order.
template <typename T>
void AppendElements(std::string& out, const std::vector<T>& values) {
  for (T value : values) {
    uint32_t bits = 0;
    std::memcpy(&bits, &value, sizeof(bits));
    PutU32(out, bits);
  }
}
template <typename T>
std::vector<T> ReadElements(std::string_view bytes, size_t offset, size_t count) {
  std::vector<T> values(count);
  for (size_t i = 0; i < count; ++i) {
    auto bits = static_cast<uint32_t>(GetLe(bytes, offset + 4 * i, 4));
    std::memcpy(&values[i], &bits, sizeof(bits));
  }
  return values;
}

absl::Status Bad(const std::string& why) {
  return core::InvalidArgument("not a voxserve voice file: " + why);
}

// Product of `shape`, or an error for negative dimensions and counts that overflow.
absl::StatusOr<size_t> ElementCount(const std::vector<int64_t>& shape) {
  if (shape.size() > kMaxDims) return Bad("tensor has more than 8 dimensions");
  uint64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0 || dim > std::numeric_limits<int32_t>::max()) return Bad("bad tensor dimension");
    if (dim != 0 && count > std::numeric_limits<uint64_t>::max() / 4 / static_cast<uint64_t>(dim)) {
      return Bad("tensor too large");
    }
    count *= static_cast<uint64_t>(dim);
  }
  return static_cast<size_t>(count);
}

}  // namespace

uint32_t Crc32(std::string_view bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  uint32_t crc = 0xFFFFFFFFu;
  for (char ch : bytes) crc = table[(crc ^ static_cast<uint8_t>(ch)) & 0xff] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

std::string EncodeVoiceFile(const VoiceMetadata& metadata, const engine::VoiceProfile& profile) {
  std::string data;
  json tensors = json::array();
  for (const auto& [name, tensor] : profile.tensors) {
    const bool is_float = tensor.dtype == ProfileTensor::DType::kFloat32;
    size_t offset = data.size();
    if (is_float) {
      AppendElements(data, tensor.floats);
    } else {
      AppendElements(data, tensor.ints);
    }
    tensors.push_back({{"name", name},
                       {"dtype", is_float ? "f32" : "i32"},
                       {"shape", tensor.shape},
                       {"offset", offset},
                       {"bytes", data.size() - offset}});
  }
  json meta = {{"id", metadata.id},
               {"name", metadata.name},
               {"model", metadata.model},
               {"family", metadata.family},
               {"transcript", metadata.transcript},
               {"created_at", metadata.created_at},
               {"prompt_seconds", metadata.prompt_seconds},
               {"attributes", profile.attributes},
               {"tensors", std::move(tensors)}};
  std::string meta_text = meta.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out(kVoiceFileMagic);
  PutU32(out, kVoiceFileVersion);
  PutU32(out, static_cast<uint32_t>(meta_text.size()));
  PutU64(out, data.size());
  PutU32(out, Crc32(meta_text + data));
  out += meta_text;
  out += data;
  return out;
}

absl::StatusOr<DecodedVoice> DecodeVoiceFile(std::string_view bytes) {
  if (bytes.size() < kVoiceFileHeaderBytes || bytes.substr(0, 8) != kVoiceFileMagic) {
    return Bad("no magic");
  }
  auto version = static_cast<uint32_t>(GetLe(bytes, 8, 4));
  if (version != kVoiceFileVersion) {
    return Bad("format version " + std::to_string(version) + " (this build reads 1)");
  }
  uint64_t meta_len = GetLe(bytes, 12, 4);
  uint64_t data_len = GetLe(bytes, 16, 8);
  auto crc = static_cast<uint32_t>(GetLe(bytes, 24, 4));
  size_t body = bytes.size() - kVoiceFileHeaderBytes;
  if (meta_len > body || data_len != body - meta_len) return Bad("truncated or padded");
  std::string_view covered = bytes.substr(kVoiceFileHeaderBytes);
  if (Crc32(covered) != crc) return Bad("checksum mismatch");
  std::string_view data = covered.substr(meta_len);

  json meta = json::parse(covered.substr(0, meta_len), nullptr, false);
  if (meta.is_discarded() || !meta.is_object()) return Bad("metadata is not a JSON object");
  DecodedVoice decoded;
  try {
    VoiceMetadata& m = decoded.metadata;
    m.id = meta.at("id").get<std::string>();
    m.name = meta.at("name").get<std::string>();
    m.model = meta.at("model").get<std::string>();
    m.family = meta.at("family").get<std::string>();
    m.transcript = meta.at("transcript").get<std::string>();
    m.created_at = meta.at("created_at").get<int64_t>();
    m.prompt_seconds = meta.at("prompt_seconds").get<double>();
    decoded.profile.family = m.family;
    decoded.profile.prompt_seconds = m.prompt_seconds;
    decoded.profile.attributes = meta.at("attributes").get<std::map<std::string, std::string>>();
    for (const json& entry : meta.at("tensors")) {
      ProfileTensor tensor;
      const std::string dtype = entry.at("dtype").get<std::string>();
      if (dtype != "f32" && dtype != "i32") return Bad("unknown dtype '" + dtype + "'");
      tensor.dtype = dtype == "f32" ? ProfileTensor::DType::kFloat32 : ProfileTensor::DType::kInt32;
      tensor.shape = entry.at("shape").get<std::vector<int64_t>>();
      auto count = ElementCount(tensor.shape);
      if (!count.ok()) return count.status();
      auto offset = entry.at("offset").get<uint64_t>();
      auto length = entry.at("bytes").get<uint64_t>();
      if (length != *count * 4 || offset > data.size() || length > data.size() - offset) {
        return Bad("tensor '" + entry.at("name").get<std::string>() + "' out of bounds");
      }
      if (tensor.dtype == ProfileTensor::DType::kFloat32) {
        tensor.floats = ReadElements<float>(data, offset, *count);
      } else {
        tensor.ints = ReadElements<int32_t>(data, offset, *count);
      }
      if (!decoded.profile.tensors.emplace(entry.at("name").get<std::string>(), std::move(tensor))
               .second) {
        return Bad("duplicate tensor name");
      }
    }
  } catch (const json::exception& error) {
    return Bad(std::string("metadata: ") + error.what());
  }
  return decoded;
}

}  // namespace voxserve::store
