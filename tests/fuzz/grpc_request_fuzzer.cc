// gRPC request messages as they come off the wire: protobuf bytes → SynthesizeRequest (unary and
// server streaming) or StreamingSynthesizeRequest (bidi), then their options → a SynthesisRequest
// (transport/grpc/request_options). The first byte picks the message and whether the call has a
// deadline.
#include <chrono>
#include <cstddef>
#include <cstdint>

#include <google/protobuf/stubs/logging.h>

#include "audio/audio_format.h"
#include "transport/grpc/request_options.h"
#include "voxserve/v1/tts.pb.h"

namespace {

constexpr int kMaxTimeoutMs = 600'000;  // the service's default limit

void Convert(const voxserve::v1::SynthesisOptions& options, bool with_deadline) {
  auto deadline = with_deadline ? std::chrono::system_clock::now() + std::chrono::seconds(30)
                                : std::chrono::system_clock::time_point::max();
  (void)voxserve::transport::grpc::ToSynthesisRequest(
      options, voxserve::audio::AudioFormat::kWav, deadline, kMaxTimeoutMs);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Parsing logs every invalid UTF-8 string field; gRPC answers those with INTERNAL itself.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t selector = data[0];
  const bool with_deadline = (selector & 2) != 0;
  ++data;
  --size;
  if ((selector & 1) == 0) {
    voxserve::v1::SynthesizeRequest request;
    if (request.ParseFromArray(data, static_cast<int>(size))) {
      Convert(request.options(), with_deadline);
    }
  } else {
    voxserve::v1::StreamingSynthesizeRequest request;
    if (request.ParseFromArray(data, static_cast<int>(size)) && request.has_config()) {
      Convert(request.config(), with_deadline);
    }
  }
  return 0;
}
