// docs/configuration.md is printed from the schema (server/config_reference.h); these tests hold
// the schema's documentation to what the loader does, so the page cannot say something the
// server does not do. The page itself against the checked-in file: tests/integration/test_docs.py.
#include "server/config_reference.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "server/config_schema.h"
#include "server/server_config.h"
#include "support/test_paths.h"
#include "yaml-cpp/yaml.h"

namespace voxserve::server {
namespace {

namespace fs = std::filesystem;

absl::StatusOr<ParsedCommandLine> Load(std::vector<std::string> args) {
  std::vector<const char*> argv = {"voxserve"};
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  return LoadServerConfig(static_cast<int>(argv.size()), argv.data(),
                          [](const std::string&) { return std::nullopt; });
}

class ConfigReferenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() /
            ("voxserve-reference-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".yaml");
  }
  void TearDown() override { fs::remove(path_); }

  absl::StatusOr<ParsedCommandLine> LoadYaml(const std::string& yaml) {
    std::ofstream(path_) << yaml;
    return Load({"--config", path_.string()});
  }

  fs::path path_;
};

// "lo..hi" → {lo, hi}; false for other bounds.
bool Range(const std::string& bounds, long long* lo, long long* hi) {
  std::smatch match;
  if (!std::regex_match(bounds, match, std::regex(R"((-?\d+)\.\.(\d+))"))) return false;
  *lo = std::stoll(match[1]);
  *hi = std::stoll(match[2]);
  return true;
}

TEST(ConfigReference, EveryKeyIsDocumented) {
  core::YamlSchema schema = DocumentedConfigSchema();
  size_t options = 0;
  for (const core::YamlSchema::Key& key : schema.Keys()) {
    const core::KeyDoc& doc = key.schema->doc();
    EXPECT_FALSE(doc.description.empty()) << key.path;
    bool section = key.schema->is_fields() && !key.schema->accepts_scalar();
    if (!section) {
      EXPECT_FALSE(doc.type.empty()) << key.path;
    }
    if (!doc.flag.empty()) {
      ++options;
      EXPECT_FALSE(doc.default_value.empty() && doc.example.empty())
          << key.path << ": neither a default nor an example to show";
    }
  }
  ServerConfig config;
  EXPECT_EQ(options, BuildOptionTable(config).specs().size());
}

TEST(ConfigReference, TheCommandPrintsThePage) {
  const char* argv[] = {"voxserve", "config-reference"};
  EXPECT_TRUE(IsConfigReferenceCommandLine(2, argv));
  const char* extra[] = {"voxserve", "config-reference", "--port"};
  EXPECT_EQ(RunConfigReference(3, extra), 2);
  const char* serve[] = {"voxserve", "--port", "1"};
  EXPECT_FALSE(IsConfigReferenceCommandLine(3, serve));
  std::string page = ConfigReferenceMarkdown();
  EXPECT_TRUE(page.starts_with("# Configuration reference\n"));
  EXPECT_NE(page.find("\n## Engine options\n"), std::string::npos);
}

// --help and the page come from the same option table: every option is in both with its flag,
// variable and key, and every scheduling key --help names is on the page.
TEST(ConfigReference, HelpAndThePageListTheSameOptions) {
  auto help = Load({"--help"});
  ASSERT_TRUE(help.ok()) << help.status();
  std::string page = ConfigReferenceMarkdown();
  ServerConfig config;
  core::OptionTable table = BuildOptionTable(config);
  for (const core::OptionSpec& spec : table.specs()) {
    for (const std::string& text :
         {spec.yaml_key, "--" + spec.flag, core::OptionTable::EnvName(spec.flag)}) {
      EXPECT_NE(page.find("`" + text + "`"), std::string::npos) << text;
      EXPECT_NE(help->message.find(text), std::string::npos) << text;
    }
  }
  for (const SchedulingKey& key : SchedulingKeys()) {
    EXPECT_NE(page.find(std::string("`models[].scheduling.") + key.name + "`"), std::string::npos);
    EXPECT_NE(help->message.find(key.name), std::string::npos) << key.name;
  }
  EXPECT_NE(help->message.find("config-reference"), std::string::npos);
}

// What the page says an option accepts is what its setter accepts, at both ends of a range.
TEST(ConfigReference, OptionBoundsDefaultsAndExamplesAreWhatTheSettersAccept) {
  ServerConfig config;
  core::OptionTable table = BuildOptionTable(config);
  for (const core::OptionSpec& spec : table.specs()) {
    SCOPED_TRACE(spec.yaml_key);
    long long lo = 0, hi = 0;
    if (spec.type == "integer") {
      ASSERT_TRUE(Range(spec.bounds, &lo, &hi)) << spec.bounds;
      EXPECT_TRUE(spec.set(std::to_string(lo)).ok());
      EXPECT_TRUE(spec.set(std::to_string(hi)).ok());
      EXPECT_FALSE(spec.set(std::to_string(lo - 1)).ok());
      EXPECT_FALSE(spec.set(std::to_string(hi + 1)).ok());
    } else if (spec.type == "boolean") {
      EXPECT_EQ(spec.bounds, "true, false");
      EXPECT_TRUE(spec.set("true").ok());
      EXPECT_FALSE(spec.set("maybe").ok());
    } else {
      EXPECT_EQ(spec.type, "string");
    }
    if (!spec.example.empty()) {
      EXPECT_TRUE(spec.set(spec.example).ok()) << spec.example;
    }
    if (spec.default_value.find(' ') == std::string::npos) {
      EXPECT_TRUE(spec.set(spec.default_value).ok()) << spec.default_value;
    }
  }
}

// Strings with a fixed set of values are checked after parsing: every listed value loads, one
// that is not listed does not.
TEST_F(ConfigReferenceTest, ListedStringValuesAreExactlyTheAcceptedOnes) {
  for (const char* value : {"text", "json"}) {
    EXPECT_TRUE(LoadYaml(std::string("log: {format: ") + value + "}\n").ok()) << value;
  }
  EXPECT_FALSE(LoadYaml("log: {format: xml}\n").ok());
  for (const char* value : {"none", "optional", "require"}) {
    EXPECT_TRUE(Load({"--tls-client-auth", value, "--tls-cert-file", "c", "--tls-key-file", "k",
                      "--tls-client-ca-file", "ca"})
                    .ok())
        << value;
  }
  EXPECT_FALSE(Load({"--tls-client-auth", "sometimes"}).ok());
}

TEST_F(ConfigReferenceTest, SchedulingBoundsAreTheValidatorsBounds) {
  for (const SchedulingKey& key : SchedulingKeys()) {
    SCOPED_TRACE(key.name);
    long long lo = 0, hi = 0;
    ASSERT_TRUE(Range(key.bounds, &lo, &hi)) << key.bounds;
    auto with = [&](long long value) {
      return LoadYaml("models:\n  - id: e\n    scheduling: {" + std::string(key.name) + ": " +
                      std::to_string(value) + "}\n");
    };
    EXPECT_TRUE(with(lo).ok()) << with(lo).status();
    EXPECT_TRUE(with(hi).ok()) << with(hi).status();
    EXPECT_FALSE(with(lo - 1).ok());
    EXPECT_FALSE(with(hi + 1).ok());
  }
}

// Every example block of the page is a valid configuration file (models_dir is not scanned:
// its example folder does not exist here).
TEST_F(ConfigReferenceTest, EveryExampleOnThePageLoads) {
  std::string page = ConfigReferenceMarkdown();
  std::regex block("```yaml\n([^`]*)```");
  int blocks = 0;
  for (std::sregex_iterator it(page.begin(), page.end(), block), end; it != end; ++it, ++blocks) {
    std::ofstream(path_) << (*it)[1].str();
    auto parsed = Load({"--config", path_.string(), "--models", ""});
    EXPECT_TRUE(parsed.ok()) << parsed.status() << "\n" << (*it)[1].str();
  }
  EXPECT_GE(blocks, 10);
}

// config/voxserve.example.yaml shows the defaults except where a line says "example".
TEST(ConfigReference, TheExampleConfigShowsTheDefaults) {
  const std::string path = std::string(test_paths::kSourceDir) + "/config/voxserve.example.yaml";
  std::vector<std::string> lines;
  std::ifstream file(path);
  for (std::string line; std::getline(file, line);) lines.push_back(line);
  YAML::Node root = YAML::LoadFile(path);
  ServerConfig config;
  core::OptionTable table = BuildOptionTable(config);
  int checked = 0;
  for (const core::OptionSpec& spec : table.specs()) {
    YAML::Node node;
    node.reset(root);
    std::stringstream dotted(spec.yaml_key);
    bool found = true;
    for (std::string part; found && std::getline(dotted, part, '.');) {
      const YAML::Node& parent = node;  // const: operator[] must not add the key
      found = parent.IsMap() && parent[part].IsDefined();
      if (found) node.reset(parent[part]);
    }
    if (!found || !node.IsScalar()) continue;
    const std::string& line = lines.at(node.Mark().line);
    if (line.find("example") != std::string::npos) continue;
    EXPECT_EQ(node.Scalar(), spec.default_value)
        << spec.yaml_key << " (line " << node.Mark().line + 1 << ")";
    ++checked;
  }
  EXPECT_GE(checked, 20);
}

// The keys the example shows commented out ("# cpus: ...", a whole "# tls:" section, models
// left as examples) are keys too: uncommented, the file still fits the schema.
TEST(ConfigReference, TheExampleConfigsCommentedOutKeysAreKnown) {
  std::ifstream file(std::string(test_paths::kSourceDir) + "/config/voxserve.example.yaml");
  std::regex commented_key(R"(^(\s*)# (\s*(- )?[a-z_]+:( .*)?)$)");
  std::string uncommented;
  int keys = 0;
  for (std::string line; std::getline(file, line);) {
    std::smatch match;
    if (std::regex_match(line, match, commented_key)) {
      line = match[1].str() + match[2].str();
      ++keys;
    }
    uncommented += line + "\n";
  }
  EXPECT_GE(keys, 15);
  absl::Status fits = DocumentedConfigSchema().Check(YAML::Load(uncommented));
  EXPECT_TRUE(fits.ok()) << fits << "\n" << uncommented;
}

}  // namespace
}  // namespace voxserve::server
