#include "transport/wyoming/wyoming_frame.h"

#include <utility>

namespace voxserve::transport::wyoming {
namespace {

using nlohmann::json;

// Event types are short words ("synthesize-chunk"); a longer one is not a Wyoming event.
constexpr size_t kMaxTypeBytes = 128;

// data_length / payload_length: absent or null is none; otherwise a non-negative integer.
absl::StatusOr<size_t> ReadLength(const json& header, const char* key, size_t bound) {
  auto it = header.find(key);
  if (it == header.end() || it->is_null()) return size_t{0};
  if (it->is_number_unsigned()) {
    const auto value = it->get<uint64_t>();
    if (value > bound) {
      return absl::InvalidArgumentError(std::string(key) + " " + std::to_string(value) +
                                        " is over the limit of " + std::to_string(bound));
    }
    return static_cast<size_t>(value);
  }
  return absl::InvalidArgumentError(std::string(key) + " must be a non-negative integer");
}

}  // namespace

void FrameParser::Append(std::string_view bytes) {
  if (error_) return;
  // Taken bytes are dropped once they are most of the buffer, so appending stays linear.
  if (start_ > 0 && start_ >= buffer_.size() / 2) {
    buffer_.erase(0, start_);
    start_ = 0;
  }
  buffer_.append(bytes);
}

absl::StatusOr<std::optional<Event>> FrameParser::Fail(std::string message) {
  error_ = absl::InvalidArgumentError("malformed Wyoming frame: " + message);
  buffer_.clear();
  start_ = 0;
  header_.reset();
  return *error_;
}

absl::Status FrameParser::ParseHeader(std::string_view line) {
  json header = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded()) return absl::InvalidArgumentError("the header line is not JSON");
  if (!header.is_object()) return absl::InvalidArgumentError("the header is not a JSON object");
  auto type = header.find("type");
  if (type == header.end() || !type->is_string() || type->get_ref<const std::string&>().empty()) {
    return absl::InvalidArgumentError("the header has no \"type\" string");
  }
  if (type->get_ref<const std::string&>().size() > kMaxTypeBytes) {
    return absl::InvalidArgumentError("the event type is too long");
  }
  Header parsed;
  parsed.event.type = type->get<std::string>();
  if (auto data = header.find("data"); data != header.end() && !data->is_null()) {
    if (!data->is_object()) return absl::InvalidArgumentError("\"data\" is not a JSON object");
    parsed.event.data = std::move(*data);
  }
  absl::StatusOr<size_t> data_length = ReadLength(header, "data_length", limits_.max_data_bytes);
  if (!data_length.ok()) return data_length.status();
  absl::StatusOr<size_t> payload_length =
      ReadLength(header, "payload_length", limits_.max_payload_bytes);
  if (!payload_length.ok()) return payload_length.status();
  parsed.data_length = *data_length;
  parsed.payload_length = *payload_length;
  header_ = std::move(parsed);
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Event>> FrameParser::Next() {
  if (error_) return *error_;
  if (!header_) {
    std::string_view rest = std::string_view(buffer_).substr(start_);
    const size_t newline = rest.find('\n');
    if (newline == std::string_view::npos) {
      if (rest.size() >= limits_.max_header_bytes) {
        return Fail("the header line is longer than " + std::to_string(limits_.max_header_bytes) +
                    " bytes");
      }
      return std::nullopt;
    }
    if (newline + 1 > limits_.max_header_bytes) {
      return Fail("the header line is longer than " + std::to_string(limits_.max_header_bytes) +
                  " bytes");
    }
    if (absl::Status status = ParseHeader(rest.substr(0, newline)); !status.ok()) {
      return Fail(std::string(status.message()));
    }
    start_ += newline + 1;
  }
  const size_t needed = header_->data_length + header_->payload_length;
  if (buffered() < needed) return std::nullopt;
  Event event = std::move(header_->event);
  if (header_->data_length > 0) {
    json data = json::parse(std::string_view(buffer_).substr(start_, header_->data_length), nullptr,
                            /*allow_exceptions=*/false);
    if (data.is_discarded() || !data.is_object()) return Fail("the data is not a JSON object");
    // As the reference merges them (dict.update): the data bytes' keys win.
    for (auto& [key, value] : data.items()) event.data[key] = std::move(value);
  }
  event.payload = buffer_.substr(start_ + header_->data_length, header_->payload_length);
  start_ += needed;
  header_.reset();
  if (start_ == buffer_.size()) {
    buffer_.clear();
    start_ = 0;
  }
  return std::optional<Event>(std::move(event));
}

std::string EncodeEvent(std::string_view type, const json& data, std::string_view payload) {
  // Keys in the reference's order: type, version, data_length, payload_length.
  nlohmann::ordered_json header;
  header["type"] = std::string(type);
  header["version"] = std::string(kProtocolVersion);
  std::string data_bytes;
  if (data.is_object() && !data.empty()) {
    data_bytes = data.dump(-1, ' ', false, json::error_handler_t::replace);
    header["data_length"] = data_bytes.size();
  }
  if (!payload.empty()) header["payload_length"] = payload.size();
  std::string frame = header.dump(-1, ' ', false, json::error_handler_t::replace);
  frame.reserve(frame.size() + 1 + data_bytes.size() + payload.size());
  frame += '\n';
  frame += data_bytes;
  frame.append(payload);
  return frame;
}

}  // namespace voxserve::transport::wyoming
