// GPT-2's byte-level alphabet (every byte written as one printable code point, so a vocabulary
// of byte strings can live in a JSON file) and the lossy UTF-8 decoding its decoders apply.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace voxserve::text {

// The code point that stands for `byte`: printable Latin-1 bytes ('!'..'~', U+00A1..U+00AC,
// U+00AE..U+00FF) stand for themselves, the other 68 get U+0100 on, in byte order (GPT-2's
// bytes_to_unicode, used unchanged by Qwen2).
char32_t ByteToCodePoint(std::uint8_t byte);

// The raw bytes that a vocabulary spelling ("Ġthe") stands for; nullopt when it is not valid
// UTF-8 or holds a code point outside the alphabet.
std::optional<std::string> ByteLevelToBytes(std::string_view spelling);

// The vocabulary spelling of raw bytes (inverse of ByteLevelToBytes).
std::string BytesToByteLevel(std::string_view bytes);

// `bytes` as valid UTF-8: each maximal ill-formed subsequence becomes U+FFFD (the Unicode
// standard's recommended practice, which Python's errors="replace" and Rust's
// from_utf8_lossy, i.e. both HF tokenizers, follow).
std::string DecodeUtf8Lossy(std::string_view bytes);

}  // namespace voxserve::text
