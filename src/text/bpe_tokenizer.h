// Qwen2's byte-level BPE tokenizer (what Hugging Face's Qwen2Tokenizer / Qwen2TokenizerFast do),
// read from a vocab.json + merges.txt pair: CosyVoice 2/3's text tokenizer. No library on this
// machine exports a C/C++ tokenizer for these files (reference/model-interfaces.md 3.5), so the
// few rules are written here: added tokens split out first, NFC, Qwen2's pre-tokenizer regex
// (ICU), GPT-2's byte->unicode alphabet, merges by rank. No BOS/EOS is added.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace voxserve::text {

// One token matched in raw text before anything else and never merged (HF "added token").
struct AddedToken {
  std::string content;  // UTF-8, matched exactly (no lstrip/rstrip, not normalized)
  int32_t id = 0;
  bool special = true;  // dropped by Decode(..., skip_special_tokens = true)
};

// Immutable after Create/Load; safe cross thread (the merge cache has its own lock).
class Qwen2Tokenizer {
 public:
  // vocab.json (byte-level token -> id) and merges.txt ("a b" per line by rank, an optional
  // "#version" first line), plus added tokens with their ids. Malformed files, a token outside
  // the byte-level alphabet, a merge of unknown tokens or a duplicate id -> InvalidArgument.
  static absl::StatusOr<std::unique_ptr<Qwen2Tokenizer>> Load(const std::string& vocab_json_path,
                                                              const std::string& merges_txt_path,
                                                              std::vector<AddedToken> added_tokens);

  // A tokenizer directory as Hugging Face ships it: vocab.json, merges.txt and, when present,
  // tokenizer_config.json's added_tokens_decoder. Then `extra_special_tokens` are added as HF's
  // add_special_tokens() does: one already known keeps its id, a new one gets the next free id
  // (the current size), in list order. A missing tokenizer_config.json means no added tokens.
  static absl::StatusOr<std::unique_ptr<Qwen2Tokenizer>> Create(
      const std::string& directory, std::span<const std::string_view> extra_special_tokens = {});

  // The same from file contents in memory (tests, fuzzers); `added_tokens` keep their ids and
  // `extra_special_tokens` are added after them as Create() does.
  static absl::StatusOr<std::unique_ptr<Qwen2Tokenizer>> FromText(
      std::string_view vocab_json, std::string_view merges_txt,
      std::vector<AddedToken> added_tokens = {},
      std::span<const std::string_view> extra_special_tokens = {});

  ~Qwen2Tokenizer();
  Qwen2Tokenizer(const Qwen2Tokenizer&) = delete;
  Qwen2Tokenizer& operator=(const Qwen2Tokenizer&) = delete;

  // Token ids of `utf8`; InvalidArgument when it is not valid UTF-8. Linear-ish time in the
  // input (a 1 MB run of one letter is one pre-token: O(n log n) merges, no recursion).
  absl::StatusOr<std::vector<int32_t>> Encode(std::string_view utf8) const;

  // Text of `ids` (added tokens as their content); bytes that do not form UTF-8 become U+FFFD,
  // one per maximal ill-formed subsequence, as HF does. An id outside the vocabulary ->
  // InvalidArgument.
  absl::StatusOr<std::string> Decode(std::span<const int32_t> ids,
                                     bool skip_special_tokens = false) const;

  // Id of an added token, or of a vocabulary token spelled as in vocab.json ("Ġthe").
  std::optional<int32_t> TokenId(std::string_view token) const;

  // len(tokenizer) in HF terms: the vocabulary plus the added tokens (ids 0..size-1).
  int32_t vocab_size() const;
  std::span<const AddedToken> added_tokens() const;

 private:
  struct Impl;
  static absl::StatusOr<std::unique_ptr<Impl>> Build(
      std::vector<std::string> id_bytes, std::string_view vocab_where,
      std::vector<std::pair<std::string, std::string>> merges, std::string_view merges_where,
      std::vector<AddedToken> added_tokens, std::span<const std::string_view> extra_special_tokens);
  static absl::StatusOr<std::unique_ptr<Qwen2Tokenizer>> FromText(
      std::string_view vocab_json, std::string_view vocab_where, std::string_view merges_txt,
      std::string_view merges_where, std::vector<AddedToken> added_tokens,
      std::span<const std::string_view> extra_special_tokens);
  explicit Qwen2Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace voxserve::text
