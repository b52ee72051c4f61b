// An endpoint URL taken apart: which transport, where, and the path prefix of every route.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace voxserve::client {

enum class Scheme { kHttp, kHttps, kGrpc, kGrpcs, kWs, kWss, kWyoming };

struct Endpoint {
  std::string url;  // as given, for messages and CallInfo
  Scheme scheme = Scheme::kHttp;
  std::string host;         // without brackets for IPv6 literals
  std::string port;         // always set: the scheme's default when the URL has none
  std::string path_prefix;  // "" or "/prefix" (no trailing slash)

  bool tls() const {
    return scheme == Scheme::kHttps || scheme == Scheme::kGrpcs || scheme == Scheme::kWss;
  }
  std::string HostHeader() const;  // "host:port" (brackets kept for IPv6)
};

// "http://host[:port][/prefix]", https, grpc(s), ws(s), wyoming (default port 10200). No user
// info, query or fragment.
absl::StatusOr<Endpoint> ParseEndpoint(const std::string& url);

}  // namespace voxserve::client
