#include "transport/http/query_string.h"

#include "absl/strings/ascii.h"
#include "core/error.h"

namespace voxserve::transport::http {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = absl::ascii_tolower(static_cast<unsigned char>(c));
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

absl::StatusOr<std::string> Decode(std::string_view encoded, std::string_view param) {
  std::string decoded;
  decoded.reserve(encoded.size());
  for (size_t i = 0; i < encoded.size(); ++i) {
    if (encoded[i] == '+') {
      decoded += ' ';
    } else if (encoded[i] != '%') {
      decoded += encoded[i];
    } else {
      const int high = i + 2 < encoded.size() ? HexValue(encoded[i + 1]) : -1;
      const int low = high >= 0 ? HexValue(encoded[i + 2]) : -1;
      if (low < 0) {
        return core::InvalidArgument("the query has an invalid percent-escape '" +
                                         std::string(encoded.substr(i, 3)) +
                                         "': '%' must be followed by two hex digits",
                                     param, "invalid_query");
      }
      decoded += static_cast<char>(high * 16 + low);
      i += 2;
    }
  }
  return decoded;
}

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> ParseQuery(std::string_view query) {
  std::map<std::string, std::string> params;
  while (!query.empty()) {
    const size_t end = query.find('&');
    std::string_view pair = query.substr(0, end);
    query = end == std::string_view::npos ? std::string_view() : query.substr(end + 1);
    if (pair.empty()) continue;  // "a=1&&b=2"
    const size_t equals = pair.find('=');
    auto name = Decode(pair.substr(0, equals), {});
    if (!name.ok()) return name.status();
    auto value = Decode(
        equals == std::string_view::npos ? std::string_view() : pair.substr(equals + 1), *name);
    if (!value.ok()) return value.status();
    params[*std::move(name)] = *std::move(value);
  }
  return params;
}

}  // namespace voxserve::transport::http
