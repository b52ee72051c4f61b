// The shape a YAML document may have: which keys each mapping holds and what kind of value each
// takes. Checked before any value is read, so a misspelled key or a wrong-typed section is an
// error naming its path and line, e.g.
//   models[0].scheduling.max_batch_sise: unknown key (did you mean max_batch_size?) (line 7)
// instead of being ignored (or, for a scalar where a map belongs, throwing out of yaml-cpp).
// Keys starting with "x-" are extension fields (the Compose file convention) and never checked:
// room for YAML anchors and for tools that annotate the file. A key written twice in one mapping
// is an error naming both lines (yaml-cpp would keep the first value without a word).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace YAML {
class Node;
}

namespace voxserve::core {

// Built once (e.g. from an option table plus the structured sections), then only read: Check()
// is safe cross thread. Move-only: sections own their sub-schemas.
class YamlSchema {
 public:
  static YamlSchema Scalar();                     // one value: string, number or boolean
  static YamlSchema ListOf(YamlSchema element);   // a sequence of elements of one shape
  static YamlSchema MapOf(YamlSchema value);      // any keys (e.g. alias names), values of one shape
  static YamlSchema Fields();                     // only the keys added with Field()
  static YamlSchema ScalarOrFields(YamlSchema fields);  // `a: v` or `a: {model: m, voice: v}`
  static YamlSchema ScalarOrListOf(YamlSchema element);  // `a: v` or `a: [v, w]`

  // Adds a known key of a Fields() schema; a dotted key ("http.port") adds the sections on the
  // way. Adding a key to the file is one call.
  YamlSchema& Field(std::string_view dotted_key, YamlSchema value) &;
  YamlSchema&& Field(std::string_view dotted_key, YamlSchema value) &&;

  // OK when `node` fits; else InvalidArgument naming the key path (under `path`) and the line.
  // A null value (`key:` with nothing after it) fits anything: it means "not set".
  absl::Status Check(const YAML::Node& node, std::string_view path = "") const;

  YamlSchema(YamlSchema&&) = default;
  YamlSchema& operator=(YamlSchema&&) = default;
  ~YamlSchema();

 private:
  enum class Shape { kScalar, kList, kMapOf, kFields };
  explicit YamlSchema(Shape shape) : shape_(shape) {}
  std::string Expected() const;
  absl::Status CheckFields(const YAML::Node& node, std::string_view path) const;

  Shape shape_;
  bool scalar_too_ = false;                  // kFields or kList that also accepts a single value
  std::unique_ptr<YamlSchema> element_;      // kList, kMapOf
  std::map<std::string, std::unique_ptr<YamlSchema>, std::less<>> fields_;  // kFields
};

// Levenshtein distance, for "did you mean" suggestions.
size_t EditDistance(std::string_view a, std::string_view b);

}  // namespace voxserve::core
