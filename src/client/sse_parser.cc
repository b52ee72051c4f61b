#include "client/sse_parser.h"

namespace voxserve::client {

SseParser::SseParser(std::function<void(const std::string& data)> on_event)
    : on_event_(std::move(on_event)) {}

void SseParser::Feed(std::string_view bytes) {
  pending_.append(bytes);
  size_t start = 0;
  while (true) {
    size_t end = pending_.find('\n', start);
    if (end == std::string::npos) break;
    std::string_view line(pending_.data() + start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    Line(line);
    start = end + 1;
  }
  pending_.erase(0, start);
}

void SseParser::Line(std::string_view line) {
  if (line.empty()) {  // a blank line dispatches the event
    if (has_data_) on_event_(data_);
    data_.clear();
    has_data_ = false;
    return;
  }
  if (line.front() == ':') return;  // comment
  size_t colon = line.find(':');
  std::string_view field = line.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field != "data") return;
  if (has_data_) data_ += '\n';
  data_.append(value);
  has_data_ = true;
}

}  // namespace voxserve::client
