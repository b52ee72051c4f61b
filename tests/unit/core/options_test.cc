#include "core/options.h"

#include <map>
#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "yaml-cpp/yaml.h"

namespace voxserve::core {
namespace {

using ::testing::HasSubstr;

// An environment that holds only what the test puts in it; the process environment is never read.
EnvLookup FakeEnv(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const std::string& name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

// Two options shaped like the server's: an integer with a range and a free string.
class OptionTableTest : public ::testing::Test {
 protected:
  OptionTableTest() {
    table_.Add(
        {"http.port", "port", "port to listen on, 1..65535", "8000", [this](std::string_view text) {
           long long value = 0;
           absl::Status status = ParseInt(text, 1, 65535, &value);
           if (status.ok()) port_ = value;
           return status;
         }});
    table_.Add({"log.level", "log-level", "log level", "info", [this](std::string_view text) {
                  log_level_ = std::string(text);
                  return absl::OkStatus();
                }});
  }

  OptionTable table_;
  long long port_ = 8000;
  std::string log_level_ = "info";
};

TEST_F(OptionTableTest, YamlSetsNestedDottedKeys) {
  ASSERT_TRUE(table_.ApplyYaml(YAML::Load("http:\n  port: 9000\nlog:\n  level: debug\n")).ok());
  EXPECT_EQ(port_, 9000);
  EXPECT_EQ(log_level_, "debug");
}

TEST_F(OptionTableTest, YamlWithoutTheKeyLeavesTheDefault) {
  ASSERT_TRUE(table_.ApplyYaml(YAML::Load("http:\n  host: 0.0.0.0\n")).ok());
  EXPECT_EQ(port_, 8000);
}

TEST_F(OptionTableTest, YamlNullLeavesTheDefault) {
  ASSERT_TRUE(table_.ApplyYaml(YAML::Load("http:\n  port: ~\n")).ok());
  EXPECT_EQ(port_, 8000);
}

TEST_F(OptionTableTest, YamlWhereAParentIsAScalarLeavesTheDefault) {
  ASSERT_TRUE(table_.ApplyYaml(YAML::Load("http: 5\n")).ok());
  EXPECT_EQ(port_, 8000);
}

TEST_F(OptionTableTest, EmptyYamlDocumentSetsNothing) {
  ASSERT_TRUE(table_.ApplyYaml(YAML::Load("")).ok());
  EXPECT_EQ(port_, 8000);
}

TEST_F(OptionTableTest, YamlListWhereAValueBelongsIsAnErrorNamingTheKey) {
  absl::Status status = table_.ApplyYaml(YAML::Load("http:\n  port: [1, 2]\n"));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("config key http.port"));
}

TEST(OptionTableListTest, AListOptionTakesAYamlListOrACommaSeparatedValue) {
  OptionTable table;
  std::string allow;
  OptionSpec spec{"wyoming.allow", "wyoming-allow", "addresses", "",
                  [&allow](std::string_view text) {
                    allow = std::string(text);
                    return absl::OkStatus();
                  }};
  spec.list = true;
  table.Add(spec);
  ASSERT_TRUE(table.ApplyYaml(YAML::Load("wyoming:\n  allow: [127.0.0.1, 10.0.0.0/8]\n")).ok());
  EXPECT_EQ(allow, "127.0.0.1,10.0.0.0/8");
  ASSERT_TRUE(table.ApplyYaml(YAML::Load("wyoming:\n  allow: 192.168.1.0/24\n")).ok());
  EXPECT_EQ(allow, "192.168.1.0/24");
  absl::Status nested = table.ApplyYaml(YAML::Load("wyoming:\n  allow: [[1]]\n"));
  EXPECT_EQ(nested.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(nested.message()), HasSubstr("config key wyoming.allow"));
}

TEST_F(OptionTableTest, ApplyYamlDoesNotModifyTheTree) {
  // yaml-cpp's Node::operator= writes through to the node it refers to: walking down with
  // `node = node[part]` would replace the root map by its "http" child.
  const std::string text = "http:\n  port: 9000\n  host: 0.0.0.0\nother: [1, 2]";
  YAML::Node root = YAML::Load(text);
  const std::string before = YAML::Dump(root);
  ASSERT_TRUE(table_.ApplyYaml(root).ok());
  EXPECT_EQ(YAML::Dump(root), before);
}

TEST_F(OptionTableTest, ApplyYamlDoesNotAddMissingKeysToTheTree) {
  YAML::Node root = YAML::Load("unrelated: 1");
  const std::string before = YAML::Dump(root);
  ASSERT_TRUE(table_.ApplyYaml(root).ok());
  EXPECT_EQ(YAML::Dump(root), before);
}

TEST_F(OptionTableTest, EnvironmentOverridesYaml) {
  ASSERT_TRUE(table_.ApplyYaml(YAML::Load("http:\n  port: 9000\n")).ok());
  ASSERT_TRUE(table_.ApplyEnv(FakeEnv({{"VOXSERVE_PORT", "9100"}})).ok());
  EXPECT_EQ(port_, 9100);
}

TEST_F(OptionTableTest, EnvironmentWithoutTheVariableKeepsTheYamlValue) {
  ASSERT_TRUE(table_.ApplyYaml(YAML::Load("http:\n  port: 9000\n")).ok());
  ASSERT_TRUE(table_.ApplyEnv(FakeEnv({{"VOXSERVE_LOG_LEVEL", "warn"}})).ok());
  EXPECT_EQ(port_, 9000);
  EXPECT_EQ(log_level_, "warn");
}

TEST_F(OptionTableTest, FlagsOverrideEnvironmentAndYaml) {
  ASSERT_TRUE(table_.ApplyYaml(YAML::Load("http:\n  port: 9000\n")).ok());
  ASSERT_TRUE(table_.ApplyEnv(FakeEnv({{"VOXSERVE_PORT", "9100"}})).ok());
  ASSERT_TRUE(table_.ApplyFlags({{"port", "9200"}}).ok());
  EXPECT_EQ(port_, 9200);
}

TEST_F(OptionTableTest, FlagsOverrideYamlWhenNoEnvironmentVariableIsSet) {
  ASSERT_TRUE(table_.ApplyYaml(YAML::Load("log:\n  level: debug\n")).ok());
  ASSERT_TRUE(table_.ApplyEnv(FakeEnv({})).ok());
  ASSERT_TRUE(table_.ApplyFlags({{"log-level", "error"}}).ok());
  EXPECT_EQ(log_level_, "error");
}

TEST_F(OptionTableTest, UnknownFlagsAreNotTheTablesConcern) {
  ASSERT_TRUE(table_.ApplyFlags({{"config", "/etc/voxserve.yaml"}}).ok());
  EXPECT_EQ(port_, 8000);
}

TEST_F(OptionTableTest, BadYamlValueNamesTheConfigKeyAndTheRange) {
  absl::Status status = table_.ApplyYaml(YAML::Load("http:\n  port: 70000\n"));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("config key http.port"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("1..65535"));
}

TEST_F(OptionTableTest, BadEnvironmentValueNamesTheVariableAndTheRange) {
  absl::Status status = table_.ApplyEnv(FakeEnv({{"VOXSERVE_PORT", "0"}}));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("VOXSERVE_PORT"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("1..65535"));
}

TEST_F(OptionTableTest, BadFlagValueNamesTheFlagAndTheProblem) {
  absl::Status status = table_.ApplyFlags({{"port", "eighty"}});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("--port"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("'eighty' is not an integer"));
}

TEST_F(OptionTableTest, BadValueLeavesThePreviousValue) {
  ASSERT_TRUE(table_.ApplyFlags({{"port", "9000"}}).ok());
  EXPECT_FALSE(table_.ApplyFlags({{"port", "99999"}}).ok());
  EXPECT_EQ(port_, 9000);
}

TEST(OptionTable, EnvNameIsPrefixedUppercaseWithUnderscores) {
  EXPECT_EQ(OptionTable::EnvName("max-body-bytes"), "VOXSERVE_MAX_BODY_BYTES");
  EXPECT_EQ(OptionTable::EnvName("port"), "VOXSERVE_PORT");
}

TEST(OptionTable, KeepsSpecsInDeclarationOrder) {
  OptionTable table;
  auto ignore = [](std::string_view) { return absl::OkStatus(); };
  table.Add({"b", "b", "", "", ignore});
  table.Add({"a", "a", "", "", ignore});
  ASSERT_EQ(table.specs().size(), 2u);
  EXPECT_EQ(table.specs()[0].flag, "b");
  EXPECT_EQ(table.specs()[1].flag, "a");
}

TEST(ParseInt, AcceptsIntegersInRangeIncludingTheBounds) {
  long long value = 0;
  ASSERT_TRUE(ParseInt("1", 1, 10, &value).ok());
  EXPECT_EQ(value, 1);
  ASSERT_TRUE(ParseInt("10", 1, 10, &value).ok());
  EXPECT_EQ(value, 10);
  ASSERT_TRUE(ParseInt("-3", -5, 5, &value).ok());
  EXPECT_EQ(value, -3);
}

TEST(ParseInt, RejectsTrailingGarbage) {
  long long value = 7;
  absl::Status status = ParseInt("42abc", 0, 100, &value);
  EXPECT_THAT(std::string(status.message()), HasSubstr("'42abc' is not an integer"));
  EXPECT_EQ(value, 7);
}

TEST(ParseInt, RejectsEmptyText) {
  long long value = 0;
  EXPECT_FALSE(ParseInt("", 0, 100, &value).ok());
}

TEST(ParseInt, RejectsSurroundingWhitespace) {
  long long value = 0;
  EXPECT_FALSE(ParseInt(" 42", 0, 100, &value).ok());
  EXPECT_FALSE(ParseInt("42 ", 0, 100, &value).ok());
}

TEST(ParseInt, RejectsExponentAndFractionNotation) {
  long long value = 0;
  EXPECT_FALSE(ParseInt("1e3", 0, 10000, &value).ok());
  EXPECT_FALSE(ParseInt("1.0", 0, 10000, &value).ok());
}

TEST(ParseInt, RejectsValuesOutsideTheRangeNamingTheRange) {
  long long value = 7;
  absl::Status status = ParseInt("101", 0, 100, &value);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("101 is outside 0..100"));
  EXPECT_EQ(value, 7);
}

TEST(ParseInt, RejectsValuesThatOverflowLongLong) {
  long long value = 0;
  absl::Status status = ParseInt("99999999999999999999", 0, 100, &value);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("99999999999999999999"));
}

TEST(ParseDouble, AcceptsDecimalAndExponentNotation) {
  double value = 0;
  ASSERT_TRUE(ParseDouble("1.25", 0, 10, &value).ok());
  EXPECT_EQ(value, 1.25);
  ASSERT_TRUE(ParseDouble("1e3", 0, 10000, &value).ok());
  EXPECT_EQ(value, 1000.0);
  ASSERT_TRUE(ParseDouble("4", 0, 10, &value).ok());
  EXPECT_EQ(value, 4.0);
}

TEST(ParseDouble, RejectsTrailingGarbage) {
  double value = 2;
  absl::Status status = ParseDouble("1.5x", 0, 10, &value);
  EXPECT_THAT(std::string(status.message()), HasSubstr("'1.5x' is not a number"));
  EXPECT_EQ(value, 2);
}

TEST(ParseDouble, RejectsEmptyText) {
  double value = 0;
  EXPECT_FALSE(ParseDouble("", 0, 10, &value).ok());
}

TEST(ParseDouble, RejectsNanInfinityAndOverflow) {
  double value = 0;
  EXPECT_FALSE(ParseDouble("nan", -1e308, 1e308, &value).ok());
  EXPECT_FALSE(ParseDouble("inf", -1e308, 1e308, &value).ok());
  EXPECT_FALSE(ParseDouble("1e999", -1e308, 1e308, &value).ok());
}

TEST(ParseDouble, RejectsValuesOutsideTheRangeNamingTheRange) {
  double value = 1;
  absl::Status status = ParseDouble("4.5", 0.25, 4, &value);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("4.5 is outside 0.25"));
  EXPECT_EQ(value, 1);
}

TEST(ParseBool, AcceptsTheTrueSpellings) {
  for (const char* text : {"true", "1", "yes", "on"}) {
    bool value = false;
    ASSERT_TRUE(ParseBool(text, &value).ok()) << text;
    EXPECT_TRUE(value) << text;
  }
}

TEST(ParseBool, AcceptsTheFalseSpellings) {
  for (const char* text : {"false", "0", "no", "off"}) {
    bool value = true;
    ASSERT_TRUE(ParseBool(text, &value).ok()) << text;
    EXPECT_FALSE(value) << text;
  }
}

TEST(ParseBool, RejectsAnythingElseSayingWhatIsAllowed) {
  bool value = true;
  absl::Status status = ParseBool("maybe", &value);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("'maybe' is not a boolean (true/false)"));
  EXPECT_TRUE(value);
}

TEST(ParseBool, RejectsEmptyText) {
  bool value = false;
  EXPECT_FALSE(ParseBool("", &value).ok());
}

}  // namespace
}  // namespace voxserve::core
