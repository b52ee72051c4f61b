#include "transport/auth/distinguished_name.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"

namespace voxserve::transport::auth {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Unescaped surrounding spaces are not part of a type or value (RFC 4514 section 3: a value's
// own leading or trailing space is written escaped, "\ ").
void TrimUnescaped(std::string& text, size_t escaped_tail) {
  size_t start = 0;
  while (start < text.size() && text[start] == ' ') ++start;
  size_t end = text.size();
  while (end > start && end > escaped_tail && text[end - 1] == ' ') --end;
  text = text.substr(start, end - start);
}

}  // namespace

absl::StatusOr<DistinguishedName> DistinguishedName::Parse(std::string_view text) {
  auto malformed = [&](const std::string& why) {
    return core::InvalidArgument("'" + std::string(text) + "' is not a distinguished name (" + why +
                                 "; e.g. \"CN=service-a,O=Example\")");
  };
  DistinguishedName name;
  std::string type, value;
  bool in_value = false;
  size_t escaped_tail = 0;  // value length up to and including the last escaped character
  auto finish = [&]() -> absl::Status {
    TrimUnescaped(type, 0);
    TrimUnescaped(value, escaped_tail);
    if (!in_value || type.empty()) return malformed("expected TYPE=value");
    for (char& c : type) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    name.attributes_.emplace_back(std::move(type), std::move(value));
    type.clear();
    value.clear();
    in_value = false;
    escaped_tail = 0;
    return absl::OkStatus();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\') {
      if (!in_value || i + 1 >= text.size()) return malformed("a '\\' with nothing to escape");
      int high = HexValue(text[i + 1]);
      if (high >= 0 && i + 2 < text.size() && HexValue(text[i + 2]) >= 0) {
        value += static_cast<char>(high * 16 + HexValue(text[i + 2]));
        i += 2;
      } else {
        value += text[i + 1];
        i += 1;
      }
      escaped_tail = value.size();
    } else if (c == ',' || c == ';' || c == '+') {
      if (absl::Status status = finish(); !status.ok()) return status;
    } else if (c == '=' && !in_value) {
      in_value = true;
    } else {
      (in_value ? value : type) += c;
    }
  }
  if (absl::Status status = finish(); !status.ok()) return status;
  std::sort(name.attributes_.begin(), name.attributes_.end());
  return name;
}

}  // namespace voxserve::transport::auth
