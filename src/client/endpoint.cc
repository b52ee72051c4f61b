#include "client/endpoint.h"

#include <array>
#include <utility>

#include "absl/strings/numbers.h"

namespace voxserve::client {

std::string Endpoint::HostHeader() const {
  std::string name = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return name + ":" + port;
}

absl::StatusOr<Endpoint> ParseEndpoint(const std::string& url) {
  static constexpr std::array<std::pair<std::string_view, std::pair<Scheme, const char*>>, 7>
      kSchemes = {{{"http://", {Scheme::kHttp, "80"}},
                   {"https://", {Scheme::kHttps, "443"}},
                   {"grpc://", {Scheme::kGrpc, "50051"}},
                   {"grpcs://", {Scheme::kGrpcs, "443"}},
                   {"ws://", {Scheme::kWs, "80"}},
                   {"wss://", {Scheme::kWss, "443"}},
                   {"wyoming://", {Scheme::kWyoming, "10200"}}}};
  auto bad = [&url](const std::string& why) {
    return absl::InvalidArgumentError("endpoint '" + url + "': " + why);
  };
  Endpoint endpoint;
  endpoint.url = url;
  std::string_view rest;
  const char* default_port = nullptr;
  for (const auto& [prefix, scheme] : kSchemes) {
    if (std::string_view(url).substr(0, prefix.size()) == prefix) {
      endpoint.scheme = scheme.first;
      default_port = scheme.second;
      rest = std::string_view(url).substr(prefix.size());
      break;
    }
  }
  if (default_port == nullptr)
    return bad("expected http://, https://, grpc://, grpcs://, ws://, wss:// or wyoming://");
  if (rest.find_first_of("?#@") != std::string_view::npos) {
    return bad("user info, query and fragment are not supported");
  }
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    std::string_view path = rest.substr(slash);
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    endpoint.path_prefix = std::string(path);
  }
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("unclosed '[' in an IPv6 address");
    endpoint.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("expected ':' after ']'");
      port = after.substr(1);
    }
  } else {
    size_t colon = authority.rfind(':');
    endpoint.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (endpoint.host.empty()) return bad("no host");
  if (port.empty()) {
    endpoint.port = default_port;
  } else {
    int number = 0;
    if (!absl::SimpleAtoi(std::string(port), &number) || number < 1 || number > 65535) {
      return bad("port must be 1..65535");
    }
    endpoint.port = std::to_string(number);
  }
  return endpoint;
}

}  // namespace voxserve::client
