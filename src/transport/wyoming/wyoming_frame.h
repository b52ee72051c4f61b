// The Wyoming protocol's framing (Home Assistant's voice protocol; reference: the `wyoming`
// Python package 1.9.0, wyoming/event.py): one event is a JSON header line ending in '\n'
// ({"type", "data"?, "data_length"?, "payload_length"?, "version"?}), then data_length bytes of
// JSON merged into "data" (their keys win), then payload_length raw bytes (audio).
//
// Shared by the server (transport/wyoming) and the client library (client/wyoming_transport):
// it is the wire format, like proto/, and depends on nothing of either.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace voxserve::transport::wyoming {

struct Event {
  std::string type;
  nlohmann::json data = nlohmann::json::object();  // always an object
  std::string payload;                             // raw bytes; empty when none
};

// How much one event may hold; past a bound the frame is malformed and the stream unusable.
struct FrameLimits {
  // The header line, '\n' included. asyncio's StreamReader (the reference client and server)
  // refuses lines over 64 KiB, so no Wyoming peer sends a longer one.
  size_t max_header_bytes = 64 << 10;
  size_t max_data_bytes = 1 << 20;
  size_t max_payload_bytes = 1 << 20;
};

// Splits a byte stream into events. Not thread-safe; owned by one connection. Holds at most one
// event's bytes (within the limits) plus what was appended past it.
class FrameParser {
 public:
  explicit FrameParser(FrameLimits limits = {}) : limits_(limits) {}

  void Append(std::string_view bytes);
  // The next complete event; nullopt while more bytes are needed. InvalidArgument for a
  // malformed frame (not JSON, not an object, no type, a bad or too large length, a header line
  // past its bound): the stream cannot be resynchronized, and every later call returns it too.
  absl::StatusOr<std::optional<Event>> Next();
  // Bytes appended and not yet taken by an event.
  size_t buffered() const { return buffer_.size() - start_; }

 private:
  struct Header {
    Event event;
    size_t data_length = 0;
    size_t payload_length = 0;
  };
  absl::Status ParseHeader(std::string_view line);
  absl::StatusOr<std::optional<Event>> Fail(std::string message);

  const FrameLimits limits_;
  std::string buffer_;
  size_t start_ = 0;              // bytes of buffer_ already taken
  std::optional<Header> header_;  // parsed, waiting for its data and payload
  std::optional<absl::Status> error_;
};

// One event on the wire, as the reference writes it: the header line (with "version" and the
// lengths; "data" goes after it as data_length bytes when not empty), the data, the payload.
// Strings that are not UTF-8 are written with U+FFFD in their place: never throws.
std::string EncodeEvent(std::string_view type,
                        const nlohmann::json& data = nlohmann::json::object(),
                        std::string_view payload = {});

// The protocol version this implementation follows (the reference package's).
inline constexpr std::string_view kProtocolVersion = "1.9.0";

}  // namespace voxserve::transport::wyoming
