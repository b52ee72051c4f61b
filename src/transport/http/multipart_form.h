// A strict multipart/form-data reader (RFC 7578 over RFC 2046 section 5.1) for the voice
// upload (POST /v1/audio/voices): Beast parses HTTP but not form bodies. The whole body is in
// memory already (bounded by the route's body limit); parts are views into it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace voxserve::transport::http {

struct MultipartPart {
  std::string name;                     // Content-Disposition's name (required)
  std::optional<std::string> filename;  // present for file fields (curl -F f=@x, requests files=)
  std::string content_type;             // the part's Content-Type; empty when it sent none
  std::string_view body;                // a view into the body passed to ParseMultipartForm
};

struct MultipartLimits {
  size_t max_parts = 16;                // the voice form has four fields
  size_t max_part_header_bytes = 8192;  // one part's header block
};

// The boundary of a "multipart/form-data; boundary=..." Content-Type (token or quoted; 1..70
// characters of RFC 2046's bchars, not ending in a space). UnsupportedMediaType (415) for
// another type, InvalidArgument for a missing or malformed boundary.
absl::StatusOr<std::string> MultipartBoundary(std::string_view content_type);

// Every part of the form, in order. InvalidArgument ("invalid_multipart") naming what is wrong:
// no opening or closing delimiter (a truncated body), a delimiter line not ended by CRLF, a
// header block without its blank line or over the limit, a header line without ':', folded
// headers, a part without Content-Disposition: form-data and a name, more than max_parts parts.
// Preamble and epilogue are ignored, as RFC 2046 says.
absl::StatusOr<std::vector<MultipartPart>> ParseMultipartForm(std::string_view content_type,
                                                              std::string_view body,
                                                              const MultipartLimits& limits = {});

}  // namespace voxserve::transport::http
