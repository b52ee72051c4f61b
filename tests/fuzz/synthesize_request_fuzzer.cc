// The JSON body of POST /v1/synthesize (and /tts) (transport/http/speech_request_parser).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/known_defects.h"
#include "transport/http/speech_request_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  voxserve::transport::http::HttpRequest request;
  request.method = "POST";
  request.path = "/v1/synthesize";
  request.headers = {{"content-type", "application/json"}};
  request.body.assign(reinterpret_cast<const char*>(data), size);
  try {
    (void)voxserve::transport::http::ParseSynthesizeRequest(request);
  } catch (const nlohmann::json::out_of_range& error) {
    if (!voxserve::fuzz::IsKnownJsonOverflow(error)) throw;
  }
  return 0;
}
