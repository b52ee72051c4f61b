#include "core/logging.h"

#include <memory>
#include <mutex>
#include <string>

#include "core/error.h"
#include "core/logging_internal.h"
#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

namespace voxserve::core {
namespace {

// Writes the message as a JSON string body: quotes, backslashes and control characters escaped.
class JsonEscapedMessage : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    for (char c : std::string_view(msg.payload.data(), msg.payload.size())) {
      switch (c) {
        case '"':
          dest.append(std::string_view("\\\""));
          break;
        case '\\':
          dest.append(std::string_view("\\\\"));
          break;
        case '\n':
          dest.append(std::string_view("\\n"));
          break;
        case '\r':
          dest.append(std::string_view("\\r"));
          break;
        case '\t':
          dest.append(std::string_view("\\t"));
          break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            char buffer[8];
            std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
            dest.append(std::string_view(buffer));
          } else {
            dest.push_back(c);
          }
      }
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonEscapedMessage>();
  }
};

std::mutex json_fields_mutex;
std::shared_ptr<spdlog::logger> json_fields_logger;  // guarded by json_fields_mutex
LoggingSettings current_settings;                    // guarded by json_fields_mutex

// `text` as a pattern's literal: spdlog reads '%' as a flag.
std::string PatternLiteral(std::string_view text) {
  std::string literal;
  for (char c : text) {
    if (c == '%') literal += '%';
    literal += c;
  }
  return literal;
}

constexpr const char* kJsonPrefix = R"({"ts":"%Y-%m-%dT%H:%M:%S.%e%z","level":"%l","thread":%t,)";

}  // namespace

std::shared_ptr<spdlog::logger> JsonFieldsLogger() {
  std::lock_guard lock(json_fields_mutex);
  return json_fields_logger;
}

LoggingSettings CurrentLogging() {
  std::lock_guard lock(json_fields_mutex);
  return current_settings;
}

absl::Status ConfigureLogging(std::string_view level, std::string_view format,
                              std::string_view origin) {
  spdlog::level::level_enum parsed = spdlog::level::from_str(std::string(level));
  if (parsed == spdlog::level::off && level != "off") {
    return InvalidArgument("log.level must be one of trace, debug, info, warn, error, off; got '" +
                           std::string(level) + "'");
  }
  auto logger = std::make_shared<spdlog::logger>(
      "voxserve", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  std::shared_ptr<spdlog::logger> fields_logger;
  if (format == "json") {
    const std::string prefix =
        std::string(kJsonPrefix) +
        (origin.empty() ? ""
                        : R"("origin":)" + PatternLiteral(JsonForLog(std::string(origin))) + ",");
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<JsonEscapedMessage>('*').set_pattern(prefix + R"("msg":"%*"})");
    logger->set_formatter(std::move(formatter));
    // A sink of its own (sinks own their formatter); spdlog's console sinks share one global
    // mutex, so lines of the two loggers never interleave.
    fields_logger = std::make_shared<spdlog::logger>(
        "voxserve.fields", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
    fields_logger->set_pattern(prefix + "%v}");
    fields_logger->set_level(parsed);
    fields_logger->flush_on(spdlog::level::info);
  } else if (format == "text") {
    logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%-5l%$ " +
                        (origin.empty() ? "" : "[" + PatternLiteral(origin) + "] ") + "%v");
  } else {
    return InvalidArgument("log.format must be text or json; got '" + std::string(format) + "'");
  }
  logger->set_level(parsed);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(std::move(logger));
  std::lock_guard lock(json_fields_mutex);
  json_fields_logger = std::move(fields_logger);
  current_settings = {std::string(level), std::string(format)};
  return absl::OkStatus();
}

}  // namespace voxserve::core
