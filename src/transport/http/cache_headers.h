// The response cache (docs/response-cache.md) as HTTP shows it: a request's Cache-Control (or,
// from an HTTP/1.0 client, Pragma) becomes the service's CachePolicy, and the service's
// CacheResult becomes the response's X-Cache header. Shared by every speech route (OpenAI,
// /v1/synthesize, /tts, ElevenLabs).
#pragma once

#include "service/synthesis_request.h"
#include "transport/http/http_message.h"

namespace voxserve::transport::http {

// `Cache-Control: no-cache` (or `max-age=0`, or `Pragma: no-cache` without a Cache-Control):
// kRefresh; `no-store`: kBypass; anything else: kUse.
service::CachePolicy CachePolicyOf(const HttpRequest& request);

// X-Cache: hit, miss or bypass; no header while the cache is off (kOff).
void SetCacheHeader(HttpResponse& response, service::CacheResult result);

}  // namespace voxserve::transport::http
