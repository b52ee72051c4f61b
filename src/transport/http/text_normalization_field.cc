#include "transport/http/text_normalization_field.h"

#include <string>

#include "core/error.h"

namespace voxserve::transport::http {

absl::StatusOr<std::optional<bool>> ParseTextNormalization(const nlohmann::json* value) {
  if (value == nullptr || value->is_null()) return std::optional<bool>();
  if (value->is_boolean()) return std::optional<bool>(value->get<bool>());
  if (value->is_string()) {
    const std::string& mode = value->get_ref<const std::string&>();
    if (mode == "auto") return std::optional<bool>();
    if (mode == "on") return std::optional<bool>(true);
    if (mode == "off") return std::optional<bool>(false);
  }
  return core::InvalidArgument(
      std::string(kTextNormalizationField) + " must be \"auto\", \"on\" or \"off\"",
      kTextNormalizationField, "invalid_text_normalization");
}

}  // namespace voxserve::transport::http
