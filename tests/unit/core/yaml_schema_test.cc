#include "core/yaml_schema.h"

#include <gtest/gtest.h>

#include "gmock/gmock.h"
#include "yaml-cpp/yaml.h"

namespace voxserve::core {
namespace {

using ::testing::HasSubstr;

YamlSchema ModelSchema() {
  return YamlSchema::Fields()
      .Field("id", YamlSchema::Scalar())
      .Field("options", YamlSchema::MapOf(YamlSchema::Scalar()))
      .Field("scheduling", YamlSchema::Fields()
                               .Field("max_batch_size", YamlSchema::Scalar())
                               .Field("instances", YamlSchema::Scalar()))
      .Field("warmup", YamlSchema::ListOf(YamlSchema::Scalar()));
}

YamlSchema FileSchema() {
  return YamlSchema::Fields()
      .Field("http.port", YamlSchema::Scalar())
      .Field("http.host", YamlSchema::Scalar())
      .Field("models", YamlSchema::ListOf(ModelSchema()))
      .Field("aliases", YamlSchema::MapOf(YamlSchema::ScalarOrFields(
                            YamlSchema::Fields().Field("voice", YamlSchema::Scalar()))));
}

std::string Message(const std::string& yaml) {
  absl::Status status = FileSchema().Check(YAML::Load(yaml));
  EXPECT_FALSE(status.ok()) << yaml;
  return std::string(status.message());
}

TEST(YamlSchemaTest, AWellFormedDocumentFits) {
  EXPECT_TRUE(FileSchema()
                  .Check(YAML::Load("http: {port: 80, host: a}\n"
                                    "models:\n  - id: m\n    options: {anything: 1}\n"
                                    "    scheduling: {max_batch_size: 4}\n    warmup: [Hi.]\n"
                                    "aliases: {a: cmn, b: {voice: de}}\n"))
                  .ok());
}

TEST(YamlSchemaTest, AMisspelledKeyIsNamedWithItsPathLineAndTheLikelyKey) {
  std::string message = Message("models:\n  - id: m\n    scheduling:\n      max_batch_sise: 4\n");
  EXPECT_EQ(message,
            "models[0].scheduling.max_batch_sise: unknown key (did you mean max_batch_size?) "
            "(line 4)");
}

TEST(YamlSchemaTest, AKeyFarFromAnyKnownOneListsTheKnownKeys) {
  EXPECT_EQ(Message("http: {colour: red}\n"),
            "http.colour: unknown key (known keys: host, port) (line 1)");
}

TEST(YamlSchemaTest, AScalarWhereAMappingBelongsIsAWrongTypeNotAThrow) {
  EXPECT_EQ(Message("models:\n  - id: m\n    scheduling: 4\n"),
            "models[0].scheduling: expected a mapping, got a single value (line 3)");
  EXPECT_THAT(Message("http: 8080\n"), HasSubstr("http: expected a mapping, got a single value"));
  EXPECT_THAT(Message("models: {id: m}\n"), HasSubstr("models: expected a list, got a mapping"));
  EXPECT_THAT(Message("http: {port: [1, 2]}\n"),
              HasSubstr("http.port: expected a single value, got a list"));
  EXPECT_THAT(Message("aliases: {a: [x]}\n"),
              HasSubstr("aliases.a: expected a single value or a mapping, got a list"));
}

TEST(YamlSchemaTest, FreeFormMappingsStillCheckTheirValues) {
  EXPECT_THAT(Message("models:\n  - options: {model: {nested: 1}}\n"),
              HasSubstr("models[0].options.model: expected a single value, got a mapping"));
}

TEST(YamlSchemaTest, NullValuesAndExtensionKeysAreAccepted) {
  EXPECT_TRUE(FileSchema().Check(YAML::Load("http:\nmodels:\n")).ok());
  EXPECT_TRUE(FileSchema().Check(YAML::Load("x-defaults: &d {a: 1}\nhttp: {port: 1}\n")).ok());
  EXPECT_TRUE(FileSchema().Check(YAML::Load("")).ok());
}

TEST(YamlSchemaTest, KeysListsEveryPathInDeclarationOrder) {
  YamlSchema schema =
      YamlSchema::Fields()
          .Field("http.port", YamlSchema::Scalar())
          .Field("http.host", YamlSchema::Scalar())
          .Field("models", YamlSchema::ListOf(ModelSchema()))
          .Field("aliases", YamlSchema::MapOf(YamlSchema::ScalarOrFields(YamlSchema::Fields().Field(
                                                  "voice", YamlSchema::Scalar())),
                                              "alias"));
  std::vector<std::string> paths;
  for (const YamlSchema::Key& key : schema.Keys()) paths.push_back(key.path);
  EXPECT_EQ(paths, (std::vector<std::string>{
                       "http", "http.port", "http.host", "models", "models[].id",
                       "models[].options", "models[].options.<name>", "models[].scheduling",
                       "models[].scheduling.max_batch_size", "models[].scheduling.instances",
                       "models[].warmup", "aliases", "aliases.<alias>", "aliases.<alias>.voice"}));
}

TEST(YamlSchemaTest, DocumentationStaysWithItsKey) {
  YamlSchema schema = YamlSchema::Fields().Field(
      "http.port", YamlSchema::Scalar().Doc({.description = "port", .default_value = "8080"}));
  schema.Describe("http", "the listener");
  schema.Describe("log", "log lines");  // a section that has no keys yet
  ASSERT_NE(schema.field("http"), nullptr);
  EXPECT_EQ(schema.field("http")->doc().description, "the listener");
  EXPECT_EQ(schema.field("http")->field("port")->doc().default_value, "8080");
  EXPECT_EQ(schema.field("log")->doc().description, "log lines");
  EXPECT_EQ(schema.field_order(), (std::vector<std::string>{"http", "log"}));
  // Replacing a key keeps its place.
  schema.Field("http", YamlSchema::Fields().Field("host", YamlSchema::Scalar()));
  EXPECT_EQ(schema.field_order(), (std::vector<std::string>{"http", "log"}));
  EXPECT_EQ(schema.field("http")->field("port"), nullptr);
  EXPECT_TRUE(schema.Check(YAML::Load("http: {host: a}\nlog: {}\n")).ok());
  EXPECT_FALSE(schema.Check(YAML::Load("http: {port: 1}\n")).ok());
}

TEST(YamlSchemaTest, AKeyWrittenTwiceIsNamedWithBothLines) {
  // yaml-cpp itself keeps both entries and a lookup finds the first: without this check the
  // second `port` would be ignored without a word.
  EXPECT_EQ(Message("http:\n  port: 80\n  host: a\n  port: 81\n"),
            "http.port: duplicate key (first at line 2); each key may appear once (line 4)");
  EXPECT_EQ(Message("models:\n  - id: m\n    id: n\n"),
            "models[0].id: duplicate key (first at line 2); each key may appear once (line 3)");
  EXPECT_THAT(Message("models:\n  - options: {model: a, model: b}\n"),
              HasSubstr("models[0].options.model: duplicate key"));
  EXPECT_THAT(Message("aliases:\n  a: cmn\n  a: de\n"), HasSubstr("aliases.a: duplicate key"));
  EXPECT_THAT(Message("http: {port: 1}\nhttp: {host: a}\n"), HasSubstr("http: duplicate key"));
}

TEST(YamlSchemaTest, TheSameKeyInDifferentMappingsIsNoDuplicate) {
  EXPECT_TRUE(FileSchema()
                  .Check(YAML::Load("models:\n  - id: m\n  - id: n\n"
                                    "aliases: {a: {voice: x}, b: {voice: y}}\n"))
                  .ok());
}

TEST(YamlSchemaTest, EditDistanceCountsSingleCharacterEdits) {
  EXPECT_EQ(EditDistance("max_batch_sise", "max_batch_size"), 1u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("same", "same"), 0u);
}

}  // namespace
}  // namespace voxserve::core
