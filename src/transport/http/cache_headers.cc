#include "transport/http/cache_headers.h"

#include <algorithm>
#include <string>

#include "service/response_cache.h"

namespace voxserve::transport::http {

service::CachePolicy CachePolicyOf(const HttpRequest& request) {
  // Several Cache-Control lines are one list (RFC 9110 §5.3): the strictest directive wins.
  // RFC 9111 §5.4: Pragma counts only when there is no Cache-Control.
  auto strictest = [&request](std::string_view header, bool* present) {
    service::CachePolicy policy = service::CachePolicy::kUse;
    for (const auto& [name, value] : request.headers) {
      if (name != header) continue;
      *present = true;
      policy = std::max(policy, service::ParseCacheControl(value));
    }
    return policy;
  };
  bool present = false;
  service::CachePolicy policy = strictest("cache-control", &present);
  return present ? policy : strictest("pragma", &present);
}

void SetCacheHeader(HttpResponse& response, service::CacheResult result) {
  std::string_view name = service::CacheResultName(result);
  if (!name.empty()) response.SetHeader("X-Cache", std::string(name));
}

}  // namespace voxserve::transport::http
