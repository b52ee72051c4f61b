#include "text/bpe_files.h"

#include <charconv>
#include <fstream>
#include <optional>

#include "absl/strings/str_format.h"
#include "core/error.h"
#include "nlohmann/json.hpp"
#include "text/byte_level.h"
#include "text/utf8.h"

namespace voxserve::text {

absl::StatusOr<std::string> ReadTokenizerFile(const std::string& path, std::size_t max_bytes) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return core::NotFound(absl::StrFormat("cannot open %s", path));
  std::string text;
  char buffer[1 << 16];
  while (file.read(buffer, sizeof buffer) || file.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(file.gcount()));
    if (text.size() > max_bytes) {
      return core::InvalidArgument(
          absl::StrFormat("%s is larger than %d bytes; not a tokenizer file", path, max_bytes));
    }
  }
  if (file.bad()) return core::InvalidArgument(absl::StrFormat("cannot read %s", path));
  return text;
}

absl::StatusOr<std::vector<std::string>> ParseBpeVocab(std::string_view json_text,
                                                       std::string_view where) {
  const auto json = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return core::InvalidArgument(absl::StrFormat("%s: not a JSON object", where));
  }
  const std::size_t size = json.size();
  std::vector<std::string> id_bytes(size);
  std::vector<bool> seen(size, false);
  for (const auto& [spelling, id] : json.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
        id.get<int64_t>() >= static_cast<int64_t>(size)) {
      return core::InvalidArgument(
          absl::StrFormat("%s: \"%s\" must map to an integer id in 0..%d (ids are dense)", where,
                          spelling, static_cast<int64_t>(size) - 1));
    }
    const auto index = static_cast<std::size_t>(id.get<int64_t>());
    if (seen[index]) {
      return core::InvalidArgument(absl::StrFormat("%s: id %d is used twice", where, index));
    }
    std::optional<std::string> bytes = ByteLevelToBytes(spelling);
    if (!bytes || bytes->empty()) {
      return core::InvalidArgument(absl::StrFormat(
          "%s: token \"%s\" is empty or has a character outside the byte-level alphabet", where,
          spelling));
    }
    seen[index] = true;
    id_bytes[index] = std::move(*bytes);
  }
  return id_bytes;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParseBpeMerges(
    std::string_view text, std::string_view where) {
  std::vector<std::pair<std::string, std::string>> merges;
  std::size_t line_number = 0;
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    ++line_number;
    // HF strips each line; byte-level spellings never hold ASCII whitespace (space is 'Ġ').
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
      line.remove_suffix(1);
    }
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line.empty() || (line_number == 1 && line.starts_with("#version"))) continue;
    const std::size_t space = line.find(' ');
    const std::string_view left = line.substr(0, space);
    const std::string_view right =
        space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
    std::optional<std::string> left_bytes = ByteLevelToBytes(left);
    std::optional<std::string> right_bytes = ByteLevelToBytes(right);
    if (left.empty() || right.empty() || right.find(' ') != std::string_view::npos || !left_bytes ||
        !right_bytes) {
      return core::InvalidArgument(absl::StrFormat(
          "%s:%d: expected two byte-level tokens separated by one space", where, line_number));
    }
    merges.emplace_back(std::move(*left_bytes), std::move(*right_bytes));
  }
  return merges;
}

absl::StatusOr<std::vector<AddedToken>> ParseAddedTokensDecoder(std::string_view json_text,
                                                                std::string_view where) {
  const auto json = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return core::InvalidArgument(absl::StrFormat("%s: not a JSON object", where));
  }
  std::vector<AddedToken> tokens;
  const auto decoder = json.find("added_tokens_decoder");
  if (decoder == json.end()) return tokens;
  if (!decoder->is_object()) {
    return core::InvalidArgument(
        absl::StrFormat("%s: added_tokens_decoder is not an object", where));
  }
  for (const auto& [key, entry] : decoder->items()) {
    int32_t id = -1;
    const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (error != std::errc() || end != key.data() + key.size() || id < 0) {
      return core::InvalidArgument(
          absl::StrFormat("%s: added_tokens_decoder key \"%s\" is not a token id", where, key));
    }
    if (!entry.is_object() || !entry.contains("content") || !entry["content"].is_string()) {
      return core::InvalidArgument(absl::StrFormat(
          "%s: added_tokens_decoder[\"%s\"] needs a string \"content\"", where, key));
    }
    for (const char* flag : {"lstrip", "rstrip", "single_word"}) {
      if (entry.contains(flag) && entry[flag].is_boolean() && entry[flag].get<bool>()) {
        return core::InvalidArgument(
            absl::StrFormat("%s: added token %s sets \"%s\", which this tokenizer does not support",
                            where, key, flag));
      }
    }
    AddedToken token;
    token.content = entry["content"].get<std::string>();
    token.id = id;
    token.special = entry.contains("special") && entry["special"].is_boolean()
                        ? entry["special"].get<bool>()
                        : false;
    tokens.push_back(std::move(token));
  }
  return tokens;
}

}  // namespace voxserve::text
