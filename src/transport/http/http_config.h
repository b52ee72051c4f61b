// Settings of the HTTP listener (YAML: http.*), each with the reason for its default.
#pragma once

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "transport/http/cors.h"

namespace voxserve::transport::http {

struct HttpConfig {
  std::string host = "127.0.0.1";      // loopback unless the operator decides to expose it
  int port = 8080;                     // 0 = pick a free port (tests)
  int io_threads = 0;                  // 0 = one per core
  size_t max_body_bytes = 1 << 20;     // 4096 characters of JSON-escaped CJK fit many times over
  size_t max_header_bytes = 16 << 10;  // generous for API keys and tracing headers
  int header_timeout_ms = 10'000;      // whole header must arrive in this time (slowloris)
  int body_timeout_ms = 30'000;
  int idle_timeout_ms = 60'000;   // keep-alive connection with no request
  int write_timeout_ms = 30'000;  // a client that reads nothing this long is cut off
  size_t max_connections = 10'000;
  bool playground = true;  // the web page at / (web/): how most people first listen
  CorsConfig cors;         // browsers' cross-origin calls: off until origins are listed

  absl::Status Validate() const;
};

}  // namespace voxserve::transport::http
