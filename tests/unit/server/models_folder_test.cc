// --models DIR / models_dir: the folder's Piper and Kokoro files become models of the config.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "server/server_config.h"

namespace voxserve::server {
namespace {

namespace fs = std::filesystem;

class ModelsFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("voxserve-models-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    for (const char* name : {"en_US-a-medium.onnx", "en_US-a-medium.onnx.json",
                             "kokoro-v1.0.onnx", "voices-v1.0.bin"}) {
      std::ofstream(dir_ / name) << "x";  // discovery only looks at names; loading comes later
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  absl::StatusOr<ParsedCommandLine> Load(std::vector<std::string> args) {
    std::vector<const char*> argv = {"voxserve"};
    for (const std::string& arg : args) argv.push_back(arg.c_str());
    return LoadServerConfig(static_cast<int>(argv.size()), argv.data(),
                            [](const std::string&) { return std::nullopt; });
  }

  fs::path dir_;
};

TEST_F(ModelsFolderTest, EveryVoiceFileBecomesAModelAfterTheConfiguredOnes) {
  auto parsed = Load({"--models", dir_.string()});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const auto& models = parsed->config.service.models;
  ASSERT_EQ(models.size(), 3u);
  EXPECT_EQ(models[0].engine.model_id, "espeak");
  EXPECT_EQ(models[1].engine.model_id, "en_US-a-medium");
  EXPECT_EQ(models[1].engine.engine, "piper");
  EXPECT_EQ(models[1].engine.options.at("model"), (dir_ / "en_US-a-medium.onnx").string());
  EXPECT_EQ(models[2].engine.model_id, "kokoro-v1.0");
  EXPECT_EQ(models[2].engine.engine, "kokoro");
  EXPECT_EQ(models[2].engine.options.at("voices"), (dir_ / "voices-v1.0.bin").string());
  EXPECT_TRUE(parsed->config.startup_warnings.empty());
}

TEST_F(ModelsFolderTest, AConfiguredModelOfTheSameIdWinsWithAWarning) {
  fs::path yaml = dir_ / "config.yaml";
  std::ofstream(yaml) << "models_dir: " << dir_.string() << "\n"
                      << "models:\n  - {id: espeak, engine: espeak}\n"
                      << "  - {id: en_US-a-medium, engine: piper, options: {model: /x.onnx}}\n";
  fs::create_directories(dir_ / "other");
  std::ofstream(dir_ / "other" / "stray.onnx") << "x";  // neither Piper nor Kokoro
  auto parsed = Load({"--config", yaml.string()});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const auto& models = parsed->config.service.models;
  ASSERT_EQ(models.size(), 3u);
  EXPECT_EQ(models[1].engine.options.at("model"), "/x.onnx");
  const auto& warnings = parsed->config.startup_warnings;
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("already has a model 'en_US-a-medium'"), std::string::npos);
  EXPECT_NE(warnings[1].find("stray.onnx"), std::string::npos);
}

TEST_F(ModelsFolderTest, MissingFolderIsAConfigurationError) {
  auto parsed = Load({"--models", (dir_ / "absent").string()});
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("models_dir"), std::string::npos);
  EXPECT_NE(parsed.status().message().find((dir_ / "absent").string()), std::string::npos);
}

TEST_F(ModelsFolderTest, SkipBrokenModelsIsAnOption) {
  auto parsed = Load({"--skip-broken-models", "true"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->config.service.skip_broken_models);
  EXPECT_FALSE(Load({"--skip-broken-models", "maybe"}).ok());
}

}  // namespace
}  // namespace voxserve::server
