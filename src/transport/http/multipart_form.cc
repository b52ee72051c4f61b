#include "transport/http/multipart_form.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "core/error.h"

namespace voxserve::transport::http {
namespace {

constexpr std::string_view kCrlf = "\r\n";
constexpr size_t kMaxBoundaryChars = 70;  // RFC 2046 5.1.1

absl::Status Malformed(const std::string& why) {
  return core::InvalidArgument("malformed multipart/form-data body: " + why, {},
                               "invalid_multipart");
}

std::string Lower(std::string_view text) { return absl::AsciiStrToLower(std::string(text)); }

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// RFC 2046 bchars: DIGIT / ALPHA / "'()+_,-./:=?" and space (not last).
bool IsBoundaryChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("'()+_,-./:=? ").find(c) != std::string_view::npos;
}

// RFC 9110 tchar.
bool IsTokenChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

struct Parameter {
  std::string name;  // lower case
  std::string value;
};

// `text` is what follows the media type or disposition type: *( OWS ";" OWS name "=" value ),
// value a token or a quoted-string (backslash escapes a character).
absl::StatusOr<std::vector<Parameter>> ReadParameters(std::string_view text) {
  std::vector<Parameter> parameters;
  size_t i = 0;
  auto skip_space = [&] {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  };
  while (true) {
    skip_space();
    if (i == text.size()) return parameters;
    if (text[i] != ';') return Malformed("expected ';' between header parameters");
    ++i;
    skip_space();
    if (i == text.size()) return parameters;  // a trailing ';' is harmless
    size_t start = i;
    while (i < text.size() && IsTokenChar(text[i])) ++i;
    if (i == start || i == text.size() || text[i] != '=') {
      return Malformed("a header parameter is not name=value");
    }
    Parameter parameter{Lower(text.substr(start, i - start)), {}};
    ++i;
    if (i < text.size() && text[i] == '"') {
      ++i;
      bool closed = false;
      while (i < text.size()) {
        char c = text[i++];
        if (c == '"') {
          closed = true;
          break;
        }
        if (c == '\\' && i < text.size()) c = text[i++];
        parameter.value.push_back(c);
      }
      if (!closed) return Malformed("unterminated quoted header parameter");
    } else {
      start = i;
      while (i < text.size() && IsTokenChar(text[i])) ++i;
      if (i == start) return Malformed("empty header parameter value");
      parameter.value = std::string(text.substr(start, i - start));
    }
    parameters.push_back(std::move(parameter));
  }
}

const Parameter* FindParameter(const std::vector<Parameter>& parameters, std::string_view name) {
  for (const Parameter& parameter : parameters) {
    if (parameter.name == name) return &parameter;
  }
  return nullptr;
}

// RFC 5987 ext-value "utf-8'lang'percent-encoded" (filename*=, sent by older urllib3).
std::optional<std::string> DecodeExtValue(std::string_view value) {
  size_t first = value.find('\'');
  size_t second = first == std::string_view::npos ? first : value.find('\'', first + 1);
  if (second == std::string_view::npos || Lower(value.substr(0, first)) != "utf-8") {
    return std::nullopt;
  }
  std::string decoded;
  for (size_t i = second + 1; i < value.size(); ++i) {
    if (value[i] != '%') {
      decoded.push_back(value[i]);
      continue;
    }
    if (i + 2 >= value.size() || !absl::ascii_isxdigit(static_cast<unsigned char>(value[i + 1])) ||
        !absl::ascii_isxdigit(static_cast<unsigned char>(value[i + 2]))) {
      return std::nullopt;
    }
    decoded.push_back(
        static_cast<char>(std::stoi(std::string(value.substr(i + 1, 2)), nullptr, 16)));
    i += 2;
  }
  return decoded;
}

// One part's header block (without the blank line that ends it).
absl::Status ReadPartHeaders(std::string_view block, MultipartPart& part) {
  if (block.find("\r\n ") != std::string_view::npos ||
      block.find("\r\n\t") != std::string_view::npos || block.starts_with(' ') ||
      block.starts_with('\t')) {
    return Malformed("folded part headers are not allowed (RFC 7230 3.2.4)");
  }
  bool has_disposition = false;
  while (!block.empty()) {
    size_t end = block.find(kCrlf);
    std::string_view line = block.substr(0, end);
    block = end == std::string_view::npos ? std::string_view() : block.substr(end + 2);
    if (line.empty()) return Malformed("an empty line inside a part's headers");
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0)
      return Malformed("a part header has no name");
    std::string name = Lower(Trim(line.substr(0, colon)));
    std::string_view value = Trim(line.substr(colon + 1));
    if (name == "content-type") {
      part.content_type = std::string(value);
    } else if (name == "content-disposition") {
      if (has_disposition) return Malformed("a part has two Content-Disposition headers");
      has_disposition = true;
      size_t semicolon = value.find(';');
      if (Lower(Trim(value.substr(0, semicolon))) != "form-data") {
        return Malformed("a part's Content-Disposition is not form-data");
      }
      auto parameters =
          ReadParameters(semicolon == std::string_view::npos ? "" : value.substr(semicolon));
      if (!parameters.ok()) return parameters.status();
      const Parameter* field = FindParameter(*parameters, "name");
      if (field == nullptr || field->value.empty()) return Malformed("a part has no field name");
      part.name = field->value;
      if (const Parameter* extended = FindParameter(*parameters, "filename*")) {
        part.filename = DecodeExtValue(extended->value);
      }
      if (const Parameter* filename = FindParameter(*parameters, "filename");
          filename != nullptr && !part.filename) {
        part.filename = filename->value;
      }
    }
    // Other part headers (Content-Transfer-Encoding, which RFC 7578 4.7 deprecates) are ignored.
  }
  if (!has_disposition) return Malformed("a part has no Content-Disposition header");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> MultipartBoundary(std::string_view content_type) {
  size_t semicolon = content_type.find(';');
  if (Lower(Trim(content_type.substr(0, semicolon))) != "multipart/form-data") {
    return core::UnsupportedMediaType("Content-Type must be multipart/form-data, not " +
                                      core::Quoted(Trim(content_type.substr(0, semicolon))));
  }
  auto parameters =
      ReadParameters(semicolon == std::string_view::npos ? "" : content_type.substr(semicolon));
  if (!parameters.ok()) return parameters.status();
  const Parameter* boundary = FindParameter(*parameters, "boundary");
  if (boundary == nullptr) return Malformed("Content-Type has no boundary parameter");
  const std::string& value = boundary->value;
  if (value.empty() || value.size() > kMaxBoundaryChars || value.back() == ' ') {
    return Malformed("the boundary must be 1..70 characters, not ending in a space");
  }
  for (char c : value) {
    if (!IsBoundaryChar(c)) return Malformed("the boundary has a character RFC 2046 forbids");
  }
  return value;
}

absl::StatusOr<std::vector<MultipartPart>> ParseMultipartForm(std::string_view content_type,
                                                              std::string_view body,
                                                              const MultipartLimits& limits) {
  auto boundary = MultipartBoundary(content_type);
  if (!boundary.ok()) return boundary.status();
  const std::string dash_boundary = "--" + *boundary;
  const std::string delimiter = std::string(kCrlf) + dash_boundary;

  // The first dash-boundary starts the body or follows the preamble's CRLF.
  size_t pos = 0;
  if (body.starts_with(dash_boundary)) {
    pos = dash_boundary.size();
  } else {
    size_t found = body.find(delimiter);
    if (found == std::string_view::npos) return Malformed("no opening boundary");
    pos = found + delimiter.size();
  }
  std::vector<MultipartPart> parts;
  while (true) {
    // After a boundary: "--" closes the form; otherwise optional padding, then CRLF.
    if (body.substr(pos, 2) == "--") return parts;
    while (pos < body.size() && (body[pos] == ' ' || body[pos] == '\t')) ++pos;
    if (body.substr(pos, 2) != kCrlf) {
      return Malformed(pos >= body.size() ? "body ends after a boundary (truncated)"
                                          : "a boundary line is not ended by CRLF");
    }
    pos += 2;
    if (parts.size() == limits.max_parts) {
      return Malformed("more than " + std::to_string(limits.max_parts) + " parts");
    }
    MultipartPart part;
    std::string_view header_block;
    if (body.substr(pos, 2) == kCrlf) {
      pos += 2;  // no headers at all: ReadPartHeaders reports the missing disposition
    } else {
      size_t end = body.find("\r\n\r\n", pos);
      if (end == std::string_view::npos || end - pos > limits.max_part_header_bytes) {
        const bool truncated =
            end == std::string_view::npos && body.size() - pos <= limits.max_part_header_bytes;
        return Malformed(truncated ? "a part's headers are not ended by a blank line (truncated)"
                                   : "a part's headers exceed " +
                                         std::to_string(limits.max_part_header_bytes) + " bytes");
      }
      header_block = body.substr(pos, end - pos);
      pos = end + 4;
    }
    if (absl::Status status = ReadPartHeaders(header_block, part); !status.ok()) return status;
    size_t end = body.find(delimiter, pos);
    if (end == std::string_view::npos) return Malformed("no closing boundary (truncated body)");
    part.body = body.substr(pos, end - pos);
    parts.push_back(std::move(part));
    pos = end + delimiter.size();
  }
}

}  // namespace voxserve::transport::http
