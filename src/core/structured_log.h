// Log lines with named fields: one JSON object per line in the json format (the fields sit beside
// ts/level/msg, so log pipelines can index them), `msg key=value ...` in the text format.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "nlohmann/json_fwd.hpp"
#include "spdlog/common.h"

namespace voxserve::core {

// Safe cross thread (spdlog's sinks are the _mt kind).
void LogFields(spdlog::level::level_enum level, std::string_view msg, const nlohmann::json& fields);

// One finished request, whatever the transport. Written once per request when its last byte has
// left (or the client went away). Never holds a secret: `key` is the API key's name.
struct RequestLogEntry {
  std::string request_id;
  std::string transport = "http";  // "http", "websocket", "wyoming"
  std::string method;
  std::string route;           // the matched route (bounded), not the raw target
  int status = 0;              // HTTP status; 499 when the client left first
  std::string key;             // API key name; empty when auth is off or failed
  std::string client_subject;  // verified client certificate subject (mTLS); empty otherwise
  std::string remote;          // peer address
  // Filled in by synthesis routes.
  std::string model;
  std::string voice;
  std::optional<size_t> chars;
  std::optional<double> audio_seconds;
  std::optional<double> queue_wait_seconds;
  std::optional<double> time_to_first_audio_seconds;
  double total_seconds = 0;  // request read → response fully written
  std::optional<int> close_code;  // WebSocket: the close code sent, or the client's own
};

void LogRequest(const RequestLogEntry& entry);

}  // namespace voxserve::core
