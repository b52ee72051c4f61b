#include "transport/http/dictionary_locators_field.h"

#include <string>

#include "core/error.h"

namespace voxserve::transport::http {

absl::StatusOr<std::vector<service::DictionaryLocator>> ParseDictionaryLocators(
    const nlohmann::json& value) {
  const std::string field = kDictionaryLocatorsField;
  if (!value.is_array()) {
    return core::InvalidArgument(field +
                                     " must be an array of {\"pronunciation_dictionary_id\", "
                                     "\"version_id\"} objects",
                                 field, "invalid_type");
  }
  std::vector<service::DictionaryLocator> locators;
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string at = field + "[" + std::to_string(i) + "]";
    const nlohmann::json& item = value[i];
    auto id = item.is_object() ? item.find("pronunciation_dictionary_id") : item.end();
    if (!item.is_object() || id == item.end() || !id->is_string()) {
      return core::InvalidArgument(at + " must be an object with a \"pronunciation_dictionary_id\" "
                                        "string",
                                   at, "invalid_type");
    }
    service::DictionaryLocator locator{id->get<std::string>(), ""};
    if (auto version = item.find("version_id"); version != item.end() && !version->is_null()) {
      if (!version->is_string()) {
        return core::InvalidArgument(at + ".version_id must be a string", at, "invalid_type");
      }
      locator.version_id = version->get<std::string>();
      // "" would read as "the newest" (the service's unset): a client that meant a version and
      // sent an empty one must hear so, not get another version's rules (issue 39).
      if (locator.version_id.empty()) {
        return core::InvalidArgument(
            at + ".version_id is empty: name a version, or leave version_id out (or null) for "
                 "the newest",
            at, "invalid_value");
      }
    }
    locators.push_back(std::move(locator));
  }
  return locators;
}

}  // namespace voxserve::transport::http
