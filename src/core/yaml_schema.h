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
#include <vector>

#include "absl/status/status.h"

namespace YAML {
class Node;
}

namespace voxserve::core {

// What a key means, for people: kept beside the key in the schema so the configuration reference
// (docs/configuration.md, printed by `voxserve config-reference`) is made from the same schema
// that checks the file and cannot drift from it. Empty fields are not shown.
struct KeyDoc {
  std::string description;    // what it does, when to change it
  std::string type;           // "integer", "boolean", "string", "list of strings", ...
  std::string default_value;  // as the file would spell it, or a phrase ("first model")
  std::string bounds;         // allowed values: "0..65535", "none, optional, require"
  std::string example;        // YAML: a value for a scalar or a list, a block for a mapping
  std::string flag;           // "--port", for keys that are also command-line flags
  std::string env;            // "VOXSERVE_PORT"
};

// Built once (e.g. from an option table plus the structured sections), then only read: Check()
// is safe cross thread. Move-only: sections own their sub-schemas.
class YamlSchema {
 public:
  static YamlSchema Scalar();                    // one value: string, number or boolean
  static YamlSchema ListOf(YamlSchema element);  // a sequence of elements of one shape
  // Any keys (e.g. alias names), values of one shape; `key_name` stands for the key in the
  // documentation ("voice_aliases.<alias>").
  static YamlSchema MapOf(YamlSchema value, std::string_view key_name = "name");
  static YamlSchema Fields();                            // only the keys added with Field()
  static YamlSchema ScalarOrFields(YamlSchema fields);   // `a: v` or `a: {model: m, voice: v}`
  static YamlSchema ScalarOrListOf(YamlSchema element);  // `a: v` or `a: [v, w]`

  // Adds a known key of a Fields() schema; a dotted key ("http.port") adds the sections on the
  // way. Adding a key to the file is one call.
  YamlSchema& Field(std::string_view dotted_key, YamlSchema value) &;
  YamlSchema&& Field(std::string_view dotted_key, YamlSchema value) &&;

  // Documentation of this schema's own value (see KeyDoc).
  YamlSchema& Doc(KeyDoc doc) &;
  YamlSchema&& Doc(KeyDoc doc) &&;
  // Describes a section of a Fields() schema, e.g. "http" (created when missing, as Field does).
  YamlSchema& Describe(std::string_view dotted_key, std::string description) &;
  const KeyDoc& doc() const { return doc_; }

  // Every key under this schema, parents before children, each mapping's keys in the order they
  // were added: "http", "http.port", "models", "models[].id", "voice_aliases.<alias>", ...
  // A list's elements add "[]" to the path; a MapOf's value is listed under "<key_name>".
  // The pointers are owned by this schema.
  struct Key {
    std::string path;
    int depth = 0;  // 0 for this schema's own keys
    const YamlSchema* schema = nullptr;
  };
  std::vector<Key> Keys() const;
  // The shape of the value, as errors name it: "a single value", "a list", "a mapping", ...
  std::string ShapeName() const { return Expected(); }
  bool is_scalar() const { return shape_ == Shape::kScalar; }
  bool is_list() const { return shape_ == Shape::kList; }
  bool is_map_of() const { return shape_ == Shape::kMapOf; }
  bool is_fields() const { return shape_ == Shape::kFields; }
  bool accepts_scalar() const { return shape_ == Shape::kScalar || scalar_too_; }
  // kList and kMapOf: the shape of an element; kFields: one key's schema (nullptr when unknown).
  const YamlSchema* element() const { return element_.get(); }
  const YamlSchema* field(std::string_view key) const;
  const std::vector<std::string>& field_order() const { return order_; }
  const std::string& key_name() const { return key_name_; }

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
  void CollectKeys(const std::string& path, int depth, std::vector<Key>& out) const;
  YamlSchema* SectionOf(std::string_view& dotted_key);  // leaves the last part in dotted_key
  YamlSchema* Child(std::string_view key);              // this Fields() schema's key, made if new

  Shape shape_;
  bool scalar_too_ = false;              // kFields or kList that also accepts a single value
  std::unique_ptr<YamlSchema> element_;  // kList, kMapOf
  std::map<std::string, std::unique_ptr<YamlSchema>, std::less<>> fields_;  // kFields
  std::vector<std::string> order_;  // kFields: the keys of fields_ as they were added
  std::string key_name_;            // kMapOf: what a key stands for, in the docs
  KeyDoc doc_;
};

// Levenshtein distance, for "did you mean" suggestions.
size_t EditDistance(std::string_view a, std::string_view b);

}  // namespace voxserve::core
