// --models DIR: Piper and Kokoro files found as they are downloaded.
#include "engine/onnx/model_discovery.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "test_models.h"

namespace voxserve::engine::onnx {
namespace {

namespace fs = std::filesystem;

const EngineSpec* Find(const DiscoveredModels& found, const std::string& id) {
  for (const EngineSpec& spec : found.models) {
    if (spec.model_id == id) return &spec;
  }
  return nullptr;
}

TEST(ModelDiscoveryTest, FindsPiperVoicesAndKokoroModels) {
  auto found = DiscoverModels(testing::ModelPath("models"));
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_EQ(found->models.size(), 4u);
  const EngineSpec* piper = Find(*found, "en_US-test-medium");
  ASSERT_NE(piper, nullptr);
  EXPECT_EQ(piper->engine, "piper");
  EXPECT_EQ(piper->options.at("model"), testing::ModelPath("models/en_US-test-medium.onnx"));
  const EngineSpec* kokoro = Find(*found, "kokoro-v1.0");
  ASSERT_NE(kokoro, nullptr);
  EXPECT_EQ(kokoro->engine, "kokoro");
  EXPECT_EQ(kokoro->options.at("voices"), testing::ModelPath("models/voices-v1.0.bin"));
  EXPECT_TRUE(found->notes.empty());
}

TEST(ModelDiscoveryTest, FindsTheOnnxCommunityLayoutAndMatchesVoicesByVersion) {
  fs::path root = fs::path(::testing::TempDir()) / "discovery_layouts";
  fs::remove_all(root);
  fs::create_directories(root / "Kokoro-82M-v1.0-ONNX" / "onnx");
  fs::create_directories(root / "Kokoro-82M-v1.0-ONNX" / "voices");
  std::ofstream(root / "Kokoro-82M-v1.0-ONNX" / "onnx" / "model_quantized.onnx") << "x";
  std::ofstream(root / "Kokoro-82M-v1.0-ONNX" / "voices" / "af_heart.bin") << "x";
  fs::create_directories(root / "kokoro");
  std::ofstream(root / "kokoro" / "kokoro-v1.1-zh.onnx") << "x";
  std::ofstream(root / "kokoro" / "voices-v1.0.bin") << "x";
  std::ofstream(root / "kokoro" / "voices-v1.1-zh.bin") << "x";
  std::ofstream(root / "stray.onnx") << "x";
  std::ofstream(root / "orphan.onnx.json") << "{}";

  auto found = DiscoverModels(root.string());
  ASSERT_TRUE(found.ok()) << found.status();
  const EngineSpec* community = Find(*found, "Kokoro-82M-v1.0-ONNX_quantized");
  ASSERT_NE(community, nullptr);
  EXPECT_EQ(community->options.at("voices"), (root / "Kokoro-82M-v1.0-ONNX" / "voices").string());
  const EngineSpec* zh = Find(*found, "kokoro-v1.1-zh");
  ASSERT_NE(zh, nullptr);
  EXPECT_EQ(zh->options.at("voices"), (root / "kokoro" / "voices-v1.1-zh.bin").string());
  // A voice config without its model is a Piper model that will fail to load, naming the file.
  const EngineSpec* orphan = Find(*found, "orphan");
  ASSERT_NE(orphan, nullptr);
  EXPECT_EQ(orphan->options.at("model"), (root / "orphan.onnx").string());
  ASSERT_EQ(found->notes.size(), 1u);
  EXPECT_NE(found->notes[0].find("stray.onnx"), std::string::npos);
}

TEST(ModelDiscoveryTest, MissingFolderIsAnError) {
  auto found = DiscoverModels("/nonexistent/models");
  ASSERT_FALSE(found.ok());
  EXPECT_NE(found.status().message().find("/nonexistent/models"), std::string::npos);
}

}  // namespace
}  // namespace voxserve::engine::onnx
