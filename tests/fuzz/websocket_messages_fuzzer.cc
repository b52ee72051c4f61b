// The client's messages on GET /v1/audio/speech/stream (transport/websocket/websocket_messages):
// the same bytes as the first (config) message and as a later one.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "transport/websocket/websocket_messages.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view message(reinterpret_cast<const char*>(data), size);
  namespace ws = voxserve::transport::websocket;
  if (auto config = ws::ParseConfigMessage(message); !config.ok()) {
    (void)ws::ErrorEvent(config.status());
    (void)ws::CloseCodeFor(config.status());
  }
  if (auto client = ws::ParseClientMessage(message); !client.ok()) {
    (void)ws::ErrorEvent(client.status());
  }
  return 0;
}
