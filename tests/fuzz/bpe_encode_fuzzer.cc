// Qwen2Tokenizer::Encode on arbitrary bytes (text/bpe_tokenizer), with a vocabulary built here:
// the 256 byte tokens, merges that grow a few English and Chinese words byte by byte, and
// CosyVoice-like added tokens (two sharing a prefix). Valid UTF-8 must round-trip through
// Decode to its NFC form; anything else must be refused with InvalidArgument, never crash.
#include <unicode/normalizer2.h>
#include <unicode/unistr.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "nlohmann/json.hpp"
#include "text/bpe_tokenizer.h"
#include "text/byte_level.h"

namespace {

std::unique_ptr<voxserve::text::Qwen2Tokenizer> MakeTokenizer() {
  using voxserve::text::BytesToByteLevel;
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) vocab[BytesToByteLevel(std::string(1, static_cast<char>(b)))] = b;
  std::string merges = "#version: 0.2\n";
  for (const std::string word : {" the", "hello", " world", "ing", "'s", "\n\n", "   ", "2024",
                                 "中文", "你好", "世界", "😀"}) {
    std::string prefix(1, word[0]);
    for (std::size_t i = 1; i < word.size(); ++i) {
      const std::string next(1, word[i]);
      merges += BytesToByteLevel(prefix) + " " + BytesToByteLevel(next) + "\n";
      prefix += next;
      if (!vocab.contains(BytesToByteLevel(prefix))) {
        vocab[BytesToByteLevel(prefix)] = static_cast<int>(vocab.size());
      }
    }
  }
  const int n = static_cast<int>(vocab.size());
  std::vector<voxserve::text::AddedToken> added = {
      {"<|endoftext|>", n, true}, {"<|endofprompt|>", n + 1, true}, {"[breath]", n + 2, true},
      {"[ab]", n + 3, true},      {"[ab][cd]", n + 4, true},        {"[ià]", n + 5, false}};
  auto tokenizer = voxserve::text::Qwen2Tokenizer::FromText(vocab.dump(), merges, added);
  if (!tokenizer.ok()) std::abort();
  return std::move(*tokenizer);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto tokenizer = MakeTokenizer();
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto ids = tokenizer->Encode(text);
  if (!ids.ok()) {
    if (ids.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
    return 0;
  }
  auto decoded = tokenizer->Decode(*ids);
  if (!decoded.ok()) std::abort();
  UErrorCode status = U_ZERO_ERROR;
  std::string nfc;
  icu::Normalizer2::getNFCInstance(status)
      ->normalize(icu::UnicodeString::fromUTF8(text), status)
      .toUTF8String(nfc);
  if (U_FAILURE(status) || *decoded != nfc) std::abort();
  return 0;
}
