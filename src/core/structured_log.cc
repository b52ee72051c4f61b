#include "core/structured_log.h"

#include <cmath>

#include "core/logging_internal.h"
#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"

namespace voxserve::core {
namespace {

// Seconds rounded to microseconds: enough for latency, short enough to read.
double Round(double seconds) { return std::round(seconds * 1e6) / 1e6; }

}  // namespace

std::string JsonForLog(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void LogFields(spdlog::level::level_enum level, std::string_view msg,
               const nlohmann::json& fields) {
  if (std::shared_ptr<spdlog::logger> json_logger = JsonFieldsLogger()) {
    // The logger's pattern supplies `{"ts":...,"level":...,` and the closing brace.
    std::string payload = "\"msg\":" + JsonForLog(std::string(msg));
    for (const auto& [name, value] : fields.items()) {
      payload += "," + JsonForLog(name) + ":" + JsonForLog(value);
    }
    json_logger->log(level, "{}", payload);
    return;
  }
  std::string line(msg);
  for (const auto& [name, value] : fields.items()) {
    line += " " + name + "=" + (value.is_string() ? value.get<std::string>() : JsonForLog(value));
  }
  spdlog::log(level, "{}", line);
}

void LogRequest(const RequestLogEntry& entry) {
  nlohmann::json fields = {{"request_id", entry.request_id},
                           {"transport", entry.transport},
                           {"method", entry.method},
                           {"route", entry.route},
                           {"status", entry.status}};
  if (!entry.key.empty()) fields["key"] = entry.key;
  if (!entry.client_subject.empty()) fields["client_subject"] = entry.client_subject;
  if (!entry.remote.empty()) fields["remote"] = entry.remote;
  if (!entry.model.empty()) fields["model"] = entry.model;
  if (!entry.voice.empty()) fields["voice"] = entry.voice;
  if (entry.chars) fields["chars"] = *entry.chars;
  if (entry.audio_seconds) fields["audio_seconds"] = Round(*entry.audio_seconds);
  if (entry.queue_wait_seconds) fields["queue_wait_seconds"] = Round(*entry.queue_wait_seconds);
  if (entry.time_to_first_audio_seconds) {
    fields["time_to_first_audio_seconds"] = Round(*entry.time_to_first_audio_seconds);
  }
  fields["total_seconds"] = Round(entry.total_seconds);
  if (entry.close_code) fields["close_code"] = *entry.close_code;
  LogFields(spdlog::level::info, "request", fields);
}

}  // namespace voxserve::core
