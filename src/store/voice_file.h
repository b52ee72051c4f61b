// The on-disk form of one cloned voice (docs/voice-cloning.md, "Store layout"): a fixed binary
// header, a JSON metadata block and the profile's tensors, covered by one CRC-32. Pure bytes in,
// bytes out: the file system is VoiceStore's job.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "engine/voice_cloning.h"

namespace voxserve::store {

// What the store knows of a voice besides its tensors. Owned by value.
struct VoiceMetadata {
  std::string id;          // "voice_" + 24 hex digits
  std::string name;        // as the client wrote it (unique per model, ASCII case-insensitive)
  std::string model;       // the model id it was registered with
  std::string family;      // engine::VoiceProfile::family
  std::string transcript;  // what the prompt recording says
  int64_t created_at = 0;  // Unix seconds (OpenAI's created_at)
  double prompt_seconds = 0;
};

// File layout, version 1, little-endian:
//   0  8 bytes  magic "VXVOICE\n"
//   8  u32      format version (1)
//  12  u32      metadata length M (bytes of JSON)
//  16  u64      tensor data length D
//  24  u32      CRC-32 (IEEE 802.3, zlib's) of the M + D bytes that follow
//  28  M bytes  metadata JSON: the VoiceMetadata fields, "attributes" {string: string} and
//               "tensors" [{"name", "dtype": "f32"|"i32", "shape": [...], "offset", "bytes"}]
//  28+M D bytes tensor data, each tensor's elements row-major at its offset
inline constexpr std::string_view kVoiceFileMagic = "VXVOICE\n";
inline constexpr uint32_t kVoiceFileVersion = 1;
inline constexpr size_t kVoiceFileHeaderBytes = 28;

std::string EncodeVoiceFile(const VoiceMetadata& metadata, const engine::VoiceProfile& profile);

struct DecodedVoice {
  VoiceMetadata metadata;
  engine::VoiceProfile profile;
};
// InvalidArgument naming what is wrong (magic, version, checksum, lengths, JSON, a tensor whose
// shape and byte count disagree) for anything but a file EncodeVoiceFile wrote.
absl::StatusOr<DecodedVoice> DecodeVoiceFile(std::string_view bytes);

// CRC-32 as zlib's crc32() computes it (reflected polynomial 0xEDB88320).
uint32_t Crc32(std::string_view bytes);

}  // namespace voxserve::store
