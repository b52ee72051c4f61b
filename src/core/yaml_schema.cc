#include "core/yaml_schema.h"

#include <algorithm>
#include <map>
#include <vector>

#include "core/error.h"
#include "yaml-cpp/yaml.h"

namespace voxserve::core {
namespace {

std::string Join(std::string_view path, std::string_view key) {
  if (path.empty()) return std::string(key);
  return std::string(path) + "." + std::string(key);
}

std::string LineOf(const YAML::Node& node) {
  int line = node.Mark().line;  // 0-based; -1 when yaml-cpp does not know
  return line >= 0 ? " (line " + std::to_string(line + 1) + ")" : "";
}

std::string Got(const YAML::Node& node) {
  if (node.IsScalar()) return "a single value";
  if (node.IsSequence()) return "a list";
  return "a mapping";
}

absl::Status Error(std::string_view path, const YAML::Node& node, const std::string& message) {
  return InvalidArgument((path.empty() ? std::string("config") : std::string(path)) + ": " +
                         message + LineOf(node));
}

// The closest known key when it is close enough to be a typo: at most a third of its letters
// off (one for short keys).
std::string Suggestion(
    std::string_view key,
    const std::map<std::string, std::unique_ptr<YamlSchema>, std::less<>>& known) {
  std::string best;
  size_t best_distance = std::max<size_t>(1, key.size() / 3) + 1;
  for (const auto& [name, schema] : known) {
    size_t distance = EditDistance(key, name);
    if (distance < best_distance) {
      best_distance = distance;
      best = name;
    }
  }
  return best;
}

// yaml-cpp keeps every entry of a mapping, duplicates too, and a lookup finds the first: a key
// written twice would silently mean its first value. Refused instead, naming both lines.
absl::Status CheckNoDuplicateKeys(const YAML::Node& node, std::string_view path) {
  std::map<std::string, YAML::Mark, std::less<>> seen;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) continue;  // refused by the shape checks, with its line
    auto [first, inserted] = seen.emplace(entry.first.Scalar(), entry.first.Mark());
    if (inserted) continue;
    std::string first_line = first->second.line >= 0
                                 ? " (first at line " + std::to_string(first->second.line + 1) + ")"
                                 : "";
    return Error(Join(path, entry.first.Scalar()), entry.first,
                 "duplicate key" + first_line + "; each key may appear once");
  }
  return absl::OkStatus();
}

}  // namespace

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

YamlSchema::~YamlSchema() = default;

YamlSchema YamlSchema::Scalar() { return YamlSchema(Shape::kScalar); }

YamlSchema YamlSchema::ListOf(YamlSchema element) {
  YamlSchema schema(Shape::kList);
  schema.element_ = std::make_unique<YamlSchema>(std::move(element));
  return schema;
}

YamlSchema YamlSchema::ScalarOrListOf(YamlSchema element) {
  YamlSchema schema = ListOf(std::move(element));
  schema.scalar_too_ = true;
  return schema;
}

YamlSchema YamlSchema::MapOf(YamlSchema value, std::string_view key_name) {
  YamlSchema schema(Shape::kMapOf);
  schema.element_ = std::make_unique<YamlSchema>(std::move(value));
  schema.key_name_ = std::string(key_name);
  return schema;
}

YamlSchema YamlSchema::Fields() { return YamlSchema(Shape::kFields); }

YamlSchema YamlSchema::ScalarOrFields(YamlSchema fields) {
  fields.scalar_too_ = true;
  return fields;
}

// The Fields() section a dotted key's last part belongs in, made on the way where missing.
YamlSchema* YamlSchema::SectionOf(std::string_view& dotted_key) {
  YamlSchema* section = this;
  size_t dot;
  while ((dot = dotted_key.find('.')) != std::string_view::npos) {
    section = section->Child(dotted_key.substr(0, dot));
    dotted_key.remove_prefix(dot + 1);
  }
  return section;
}

YamlSchema* YamlSchema::Child(std::string_view key) {
  auto it = fields_.find(key);
  if (it == fields_.end()) {
    it = fields_.emplace(std::string(key), std::make_unique<YamlSchema>(Fields())).first;
    order_.emplace_back(key);
  }
  return it->second.get();
}

YamlSchema& YamlSchema::Field(std::string_view dotted_key, YamlSchema value) & {
  YamlSchema* section = SectionOf(dotted_key);
  *section->Child(dotted_key) = std::move(value);
  return *this;
}

YamlSchema&& YamlSchema::Field(std::string_view dotted_key, YamlSchema value) && {
  Field(dotted_key, std::move(value));  // *this is an lvalue here: the & overload
  return std::move(*this);
}

YamlSchema& YamlSchema::Doc(KeyDoc doc) & {
  doc_ = std::move(doc);
  return *this;
}

YamlSchema&& YamlSchema::Doc(KeyDoc doc) && {
  doc_ = std::move(doc);
  return std::move(*this);
}

YamlSchema& YamlSchema::Describe(std::string_view dotted_key, std::string description) & {
  YamlSchema* section = SectionOf(dotted_key);
  section->Child(dotted_key)->doc_.description = std::move(description);
  return *this;
}

const YamlSchema* YamlSchema::field(std::string_view key) const {
  auto it = fields_.find(key);
  return it == fields_.end() ? nullptr : it->second.get();
}

std::vector<YamlSchema::Key> YamlSchema::Keys() const {
  std::vector<Key> keys;
  CollectKeys("", 0, keys);
  return keys;
}

void YamlSchema::CollectKeys(const std::string& path, int depth, std::vector<Key>& out) const {
  switch (shape_) {
    case Shape::kScalar:
      return;
    case Shape::kList:
      element_->CollectKeys(path + "[]", depth, out);
      return;
    case Shape::kMapOf: {
      std::string at = Join(path, "<" + key_name_ + ">");
      out.push_back({at, depth, element_.get()});
      element_->CollectKeys(at, depth + 1, out);
      return;
    }
    case Shape::kFields:
      for (const std::string& key : order_) {
        const YamlSchema* child = fields_.find(key)->second.get();
        std::string at = Join(path, key);
        out.push_back({at, depth, child});
        child->CollectKeys(at, depth + 1, out);
      }
      return;
  }
}

std::string YamlSchema::Expected() const {
  switch (shape_) {
    case Shape::kScalar:
      return "a single value";
    case Shape::kList:
      return scalar_too_ ? "a single value or a list" : "a list";
    case Shape::kMapOf:
      return "a mapping";
    case Shape::kFields:
      return scalar_too_ ? "a single value or a mapping" : "a mapping";
  }
  return "";
}

absl::Status YamlSchema::Check(const YAML::Node& node, std::string_view path) const {
  if (!node.IsDefined() || node.IsNull()) return absl::OkStatus();
  auto wrong_type = [&] {
    return Error(path, node, "expected " + Expected() + ", got " + Got(node));
  };
  switch (shape_) {
    case Shape::kScalar:
      return node.IsScalar() ? absl::OkStatus() : wrong_type();
    case Shape::kList: {
      if (node.IsScalar() && scalar_too_) return element_->Check(node, path);
      if (!node.IsSequence()) return wrong_type();
      for (size_t i = 0; i < node.size(); ++i) {
        std::string at = std::string(path) + "[" + std::to_string(i) + "]";
        if (absl::Status status = element_->Check(node[i], at); !status.ok()) return status;
      }
      return absl::OkStatus();
    }
    case Shape::kMapOf: {
      if (!node.IsMap()) return wrong_type();
      if (absl::Status status = CheckNoDuplicateKeys(node, path); !status.ok()) return status;
      for (const auto& entry : node) {
        if (!entry.first.IsScalar()) return Error(path, entry.first, "keys must be single values");
        std::string at = Join(path, entry.first.Scalar());
        if (absl::Status status = element_->Check(entry.second, at); !status.ok()) return status;
      }
      return absl::OkStatus();
    }
    case Shape::kFields:
      if (node.IsScalar() && scalar_too_) return absl::OkStatus();
      if (!node.IsMap()) return wrong_type();
      return CheckFields(node, path);
  }
  return absl::OkStatus();
}

absl::Status YamlSchema::CheckFields(const YAML::Node& node, std::string_view path) const {
  if (absl::Status status = CheckNoDuplicateKeys(node, path); !status.ok()) return status;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) return Error(path, entry.first, "keys must be single values");
    const std::string& key = entry.first.Scalar();
    if (key.starts_with("x-")) continue;  // extension field, see the header
    std::string at = Join(path, key);
    auto known = fields_.find(key);
    if (known == fields_.end()) {
      std::string hint = Suggestion(key, fields_);
      if (hint.empty()) {
        hint = "known keys: ";
        for (auto it = fields_.begin(); it != fields_.end(); ++it) {
          hint += (it == fields_.begin() ? "" : ", ") + it->first;
        }
      } else {
        hint = "did you mean " + hint + "?";
      }
      return Error(at, entry.first, "unknown key (" + hint + ")");
    }
    if (absl::Status status = known->second->Check(entry.second, at); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace voxserve::core
