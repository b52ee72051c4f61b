// A cloned voice's file as read back at startup (store/voice_file): a file in the voices
// directory may be damaged or foreign, and must be refused, never trusted.
#include <cstddef>
#include <cstdint>
#include <string>

#include "store/voice_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)voxserve::store::DecodeVoiceFile(bytes);
  // The checksum stops most mutations at the door; fuzz what lies behind it too by fixing the
  // CRC up when the input is long enough to have a header.
  if (size >= voxserve::store::kVoiceFileHeaderBytes) {
    std::string fixed(bytes);
    uint32_t crc = voxserve::store::Crc32(std::string_view(fixed).substr(28));
    for (int i = 0; i < 4; ++i) fixed[24 + i] = static_cast<char>((crc >> (8 * i)) & 0xff);
    (void)voxserve::store::DecodeVoiceFile(fixed);
  }
  return 0;
}
