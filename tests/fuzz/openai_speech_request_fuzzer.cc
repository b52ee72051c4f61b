// The JSON body of POST /v1/audio/speech (transport/http/speech_request_parser).
#include <cstddef>
#include <cstdint>
#include <string>

#include "transport/http/speech_request_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  voxserve::transport::http::HttpRequest request;
  request.method = "POST";
  request.path = "/v1/audio/speech";
  request.headers = {{"content-type", "application/json"}};
  request.body.assign(reinterpret_cast<const char*>(data), size);
  // Never throws: a number that overflows a double is invalid_json (issue 10).
  (void)voxserve::transport::http::ParseOpenAiSpeechRequest(request);
  return 0;
}
