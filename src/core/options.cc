#include "core/options.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "core/error.h"
#include "yaml-cpp/yaml.h"

namespace voxserve::core {
namespace {

absl::Status WithOrigin(const absl::Status& status, const std::string& origin) {
  if (status.ok()) return status;
  return InvalidArgument(origin + ": " + std::string(status.message()));
}

// Follows a dotted path through nested maps; an undefined node means "not set here". Uses const
// access and reset() because yaml-cpp's Node::operator= assigns through to the tree.
YAML::Node Lookup(const YAML::Node& root, const std::string& dotted_key) {
  YAML::Node node;
  node.reset(root);
  size_t start = 0;
  while (true) {
    size_t dot = dotted_key.find('.', start);
    std::string part = dotted_key.substr(start, dot == std::string::npos ? dot : dot - start);
    if (!node.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
    const YAML::Node& current = node;
    YAML::Node child = current[part];
    if (!child.IsDefined()) return child;
    node.reset(child);
    if (dot == std::string::npos) return node;
    start = dot + 1;
  }
}

}  // namespace

EnvLookup ProcessEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

OptionSpec& OptionTable::Add(OptionSpec spec) { return specs_.emplace_back(std::move(spec)); }

std::string OptionTable::EnvName(const std::string& flag) {
  std::string name = "VOXSERVE_";
  for (char c : flag) name += c == '-' ? '_' : static_cast<char>(std::toupper(c));
  return name;
}

absl::Status OptionTable::ApplyYaml(const YAML::Node& root) const {
  for (const OptionSpec& spec : specs_) {
    YAML::Node node = Lookup(root, spec.yaml_key);
    if (!node.IsDefined() || node.IsNull()) continue;
    std::string value;
    if (spec.list && node.IsSequence()) {
      for (const auto& item : node) {
        if (!item.IsScalar()) {
          return InvalidArgument("config key " + spec.yaml_key + ": expected a list of values");
        }
        value += (value.empty() ? "" : ",") + item.Scalar();
      }
    } else if (node.IsScalar()) {
      value = node.Scalar();
    } else {
      return InvalidArgument("config key " + spec.yaml_key + ": expected a single value");
    }
    if (auto status = spec.set(value); !status.ok()) {
      return WithOrigin(status, "config key " + spec.yaml_key);
    }
  }
  return absl::OkStatus();
}

absl::Status OptionTable::ApplyEnv(const EnvLookup& env) const {
  for (const OptionSpec& spec : specs_) {
    std::string name = EnvName(spec.flag);
    std::optional<std::string> value = env(name);
    if (!value) continue;
    if (auto status = spec.set(*value); !status.ok()) return WithOrigin(status, name);
  }
  return absl::OkStatus();
}

absl::Status OptionTable::ApplyFlags(const std::map<std::string, std::string>& flag_values) const {
  for (const OptionSpec& spec : specs_) {
    auto it = flag_values.find(spec.flag);
    if (it == flag_values.end()) continue;
    if (auto status = spec.set(it->second); !status.ok()) {
      return WithOrigin(status, "--" + spec.flag);
    }
  }
  return absl::OkStatus();
}

absl::Status ParseInt(std::string_view text, long long min, long long max, long long* out) {
  long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return InvalidArgument("'" + std::string(text) + "' is not an integer");
  }
  if (value < min || value > max) {
    return InvalidArgument(std::to_string(value) + " is outside " + std::to_string(min) + ".." +
                           std::to_string(max));
  }
  *out = value;
  return absl::OkStatus();
}

absl::Status ParseDouble(std::string_view text, double min, double max, double* out) {
  std::string copy(text);
  char* end = nullptr;
  double value = std::strtod(copy.c_str(), &end);
  if (copy.empty() || end != copy.c_str() + copy.size() || !std::isfinite(value)) {
    return InvalidArgument("'" + copy + "' is not a number");
  }
  if (value < min || value > max) {
    return InvalidArgument(copy + " is outside " + std::to_string(min) + ".." +
                           std::to_string(max));
  }
  *out = value;
  return absl::OkStatus();
}

absl::Status ParseBool(std::string_view text, bool* out) {
  if (text == "true" || text == "1" || text == "yes" || text == "on") {
    *out = true;
  } else if (text == "false" || text == "0" || text == "no" || text == "off") {
    *out = false;
  } else {
    return InvalidArgument("'" + std::string(text) + "' is not a boolean (true/false)");
  }
  return absl::OkStatus();
}

}  // namespace voxserve::core
