// Server-sent events (text/event-stream, WHATWG HTML §9.2) split out of a byte stream that may
// be cut anywhere: only `data:` fields matter to voxserve's events; others are skipped.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace voxserve::client {

class SseParser {
 public:
  // Called with each event's data (several data lines joined by '\n').
  explicit SseParser(std::function<void(const std::string& data)> on_event);
  void Feed(std::string_view bytes);

 private:
  void Line(std::string_view line);

  std::function<void(const std::string&)> on_event_;
  std::string pending_;  // an unfinished line
  std::string data_;
  bool has_data_ = false;
};

}  // namespace voxserve::client
