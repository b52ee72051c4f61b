// Parsers for the files of a Hugging Face byte-level BPE tokenizer directory (vocab.json,
// merges.txt, tokenizer_config.json), turned into raw bytes; Qwen2Tokenizer builds on them.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "text/bpe_tokenizer.h"

namespace voxserve::text {

// The contents of `path`; NotFound when it cannot be opened. `max_bytes` guards against
// pointing the loader at something huge (Qwen2's vocab.json is 2.7 MB, merges.txt 1.6 MB).
absl::StatusOr<std::string> ReadTokenizerFile(const std::string& path,
                                              std::size_t max_bytes = 64u << 20);

// vocab.json: an object of byte-level spellings -> ids 0..N-1 (each once). Returns id -> raw
// bytes. `where` names the source in messages.
absl::StatusOr<std::vector<std::string>> ParseBpeVocab(std::string_view json_text,
                                                       std::string_view where);

// merges.txt: "#version: ..." on the first line (optional), then one "left right" pair of
// byte-level spellings per line in rank order; blank lines are skipped (as HF does). Returns the
// pairs as raw bytes.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParseBpeMerges(
    std::string_view text, std::string_view where);

// tokenizer_config.json's "added_tokens_decoder" ({"151643": {"content": ..., "special": ...}});
// none when the key is absent. lstrip/rstrip/single_word set to true are refused (Qwen2 sets
// none of them, and matching would differ).
absl::StatusOr<std::vector<AddedToken>> ParseAddedTokensDecoder(std::string_view json_text,
                                                                std::string_view where);

}  // namespace voxserve::text
