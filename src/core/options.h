// Scalar settings declared once and read from three sources, later ones winning:
//   YAML file  <  VOXSERVE_* environment variable  <  command-line flag.
// Each option's setter parses and validates, so every source gets the same checks and messages.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace YAML {
class Node;
}

namespace voxserve::core {

struct OptionSpec {
  std::string yaml_key;       // dotted path in the YAML file, e.g. "http.port"
  std::string flag;           // long flag without dashes, e.g. "port"; env is VOXSERVE_PORT
  std::string help;           // one line; the allowed range belongs here
  std::string default_value;  // shown in --help
  // Parses `text` and stores it; errors say what is allowed (the caller adds where it came from).
  std::function<absl::Status(std::string_view text)> set;
  // A comma-separated list: the YAML file may also give it as a list of single values, which
  // `set` gets joined with commas.
  bool list = false;
  // For the configuration reference (docs/configuration.md, `voxserve config-reference`):
  std::string type = "string";  // integer, boolean or string
  std::string bounds;           // what `set` accepts: "0..65535", "none, optional, require"
  std::string example;          // a value worth showing; empty = the default
  std::string details;          // what --help's one line leaves out

  OptionSpec& Example(std::string value) {
    example = std::move(value);
    return *this;
  }
  OptionSpec& Details(std::string text) {
    details = std::move(text);
    return *this;
  }
};

// Looks up environment variables; injectable so tests need not touch the real environment.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
EnvLookup ProcessEnvironment();

class OptionTable {
 public:
  // The reference stays valid until the next Add: room to chain .Example() and .Details().
  OptionSpec& Add(OptionSpec spec);

  static std::string EnvName(
      const std::string& flag);  // "max-body-bytes" → VOXSERVE_MAX_BODY_BYTES

  // Each Apply* sets what its source provides and reports the first bad value with its origin.
  absl::Status ApplyYaml(const YAML::Node& root) const;
  absl::Status ApplyEnv(const EnvLookup& env) const;
  absl::Status ApplyFlags(const std::map<std::string, std::string>& flag_values) const;

  const std::vector<OptionSpec>& specs() const { return specs_; }

 private:
  std::vector<OptionSpec> specs_;
};

// Parsers shared by option setters; errors name the allowed range.
absl::Status ParseInt(std::string_view text, long long min, long long max, long long* out);
absl::Status ParseDouble(std::string_view text, double min, double max, double* out);
absl::Status ParseBool(std::string_view text, bool* out);

}  // namespace voxserve::core
