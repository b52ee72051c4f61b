// The Wyoming byte stream a client sends (transport/wyoming/wyoming_frame, wyoming_events): fed
// to the frame parser in pieces (the first byte picks their size, as TCP would cut them), every
// event read as the server reads it, and re-encoded: what was parsed must parse back the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "transport/wyoming/wyoming_events.h"
#include "transport/wyoming/wyoming_frame.h"

namespace wy = voxserve::transport::wyoming;

namespace {

void CheckRoundTrip(const wy::Event& event) {
  wy::FrameParser again;
  again.Append(wy::EncodeEvent(event.type, event.data, event.payload));
  auto parsed = again.Next();
  if (!parsed.ok() || !*parsed || (*parsed)->type != event.type || (*parsed)->data != event.data ||
      (*parsed)->payload != event.payload || again.buffered() != 0) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t piece = 1 + data[0] % 64;
  std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  wy::FrameLimits limits;
  limits.max_header_bytes = 4096;  // small bounds, so inputs reach them
  limits.max_data_bytes = 4096;
  limits.max_payload_bytes = 4096;
  wy::FrameParser parser(limits);
  for (size_t at = 0; at < stream.size(); at += piece) {
    parser.Append(stream.substr(at, piece));
    while (true) {
      auto next = parser.Next();
      if (!next.ok()) return 0;  // the stream is unusable from here on
      if (!*next) break;
      const wy::Event& event = **next;
      (void)wy::ParseSynthesize(event.data);
      (void)wy::ParseSynthesizeStart(event.data);
      (void)wy::ParseSynthesizeChunk(event.data);
      (void)wy::ParsePing(event.data);
      CheckRoundTrip(event);
    }
  }
  return 0;
}
