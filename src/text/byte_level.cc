#include "text/byte_level.h"

#include <unicode/utf8.h>

#include <array>

namespace voxserve::text {
namespace {

bool StandsForItself(std::uint8_t byte) {
  return (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) || byte >= 0xAE;
}

struct Alphabet {
  std::array<char32_t, 256> code_point{};
  // Code points of the alphabet all lie below U+0144 (256 + 68).
  std::array<int16_t, 0x144> byte_of{};
  Alphabet() {
    byte_of.fill(-1);
    char32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      const auto byte = static_cast<std::uint8_t>(b);
      code_point[b] = StandsForItself(byte) ? char32_t(b) : next++;
      byte_of[code_point[b]] = static_cast<int16_t>(b);
    }
  }
};

const Alphabet& TheAlphabet() {
  static const Alphabet alphabet;
  return alphabet;
}

void AppendUtf8(char32_t c, std::string* out) {
  // The alphabet's code points are all below U+0144: two bytes at most, never an error.
  char buffer[U8_MAX_LENGTH];
  int32_t length = 0;
  U8_APPEND_UNSAFE(reinterpret_cast<std::uint8_t*>(buffer), length, static_cast<UChar32>(c));
  out->append(buffer, static_cast<std::size_t>(length));
}

}  // namespace

char32_t ByteToCodePoint(std::uint8_t byte) { return TheAlphabet().code_point[byte]; }

std::optional<std::string> ByteLevelToBytes(std::string_view spelling) {
  const Alphabet& alphabet = TheAlphabet();
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(spelling.data());
  std::string out;
  out.reserve(spelling.size());
  std::size_t offset = 0;
  while (offset < spelling.size()) {
    UChar32 c;
    U8_NEXT(bytes, offset, spelling.size(), c);
    if (c < 0 || c >= static_cast<UChar32>(alphabet.byte_of.size()) || alphabet.byte_of[c] < 0) {
      return std::nullopt;
    }
    out.push_back(static_cast<char>(alphabet.byte_of[c]));
  }
  return out;
}

std::string BytesToByteLevel(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char byte : bytes) AppendUtf8(ByteToCodePoint(static_cast<std::uint8_t>(byte)), &out);
  return out;
}

std::string DecodeUtf8Lossy(std::string_view bytes) {
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  std::string out;
  out.reserve(bytes.size());
  std::size_t offset = 0;
  while (offset < bytes.size()) {
    const std::size_t start = offset;
    UChar32 c;
    // Since ICU 60, U8_NEXT skips exactly one maximal subpart of an ill-formed sequence.
    U8_NEXT(data, offset, bytes.size(), c);
    if (c < 0) {
      out.append("\xEF\xBF\xBD");  // U+FFFD
    } else {
      out.append(bytes.substr(start, offset - start));
    }
  }
  return out;
}

}  // namespace voxserve::text
