// The multipart/form-data body of POST /v1/audio/voices (transport/http/multipart_form). The
// input's first line is the Content-Type header, the rest the body, so the fuzzer explores
// boundaries and bodies together.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "transport/http/multipart_form.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t newline = input.find('\n');
  std::string_view content_type = input.substr(0, newline);
  std::string_view body = newline == std::string_view::npos ? "" : input.substr(newline + 1);
  voxserve::transport::http::MultipartLimits limits;
  limits.max_parts = 8;
  limits.max_part_header_bytes = 512;
  auto parts = voxserve::transport::http::ParseMultipartForm(content_type, body, limits);
  if (parts.ok()) {
    // Every part is a view into the body: reading it all must stay in bounds (ASan checks).
    size_t total = 0;
    for (const auto& part : *parts) {
      for (char c : part.body) total += static_cast<unsigned char>(c);
      total += part.name.size();
    }
    if (parts->size() > limits.max_parts) __builtin_trap();
    (void)total;
  }
  return 0;
}
