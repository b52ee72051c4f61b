// The tiny bundle the CTest fixture cosyvoice_tiny_bundle writes, and broken copies of it: a
// temporary folder of symlinks to the good bundle's files with an edited manifest.json.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "support/test_paths.h"

namespace voxserve::engine::cosyvoice::testing {

inline std::string TinyBundle() {
  const char* override_dir = std::getenv("VOXSERVE_COSYVOICE_BUNDLE");
  return override_dir != nullptr ? override_dir : test_paths::kCosyVoiceBundle;
}

// The execution provider the bundle's tests run their graphs on: cpu, or what
// VOXSERVE_TEST_EXECUTION_PROVIDER says (scripts/gpu-check.sh sets cuda on a GPU machine).
inline std::string TestExecutionProvider() {
  const char* provider = std::getenv("VOXSERVE_TEST_EXECUTION_PROVIDER");
  return provider != nullptr && *provider != '\0' ? provider : "cpu";
}

// A file a fixture writes at a path compiled in, or where `variable` points instead (the GPU
// check runs the test binaries away from their build tree).
inline std::string FixturePath(const char* variable, const char* compiled) {
  const char* path = std::getenv(variable);
  return path != nullptr && *path != '\0' ? path : compiled;
}

inline bool HaveTinyBundle() {
  return std::filesystem::exists(std::filesystem::path(TinyBundle()) / "manifest.json");
}

#define VOXSERVE_REQUIRE_TINY_BUNDLE()                                                   \
  if (!::voxserve::engine::cosyvoice::testing::HaveTinyBundle()) {                       \
    GTEST_SKIP() << "no tiny CosyVoice bundle at "                                       \
                 << ::voxserve::engine::cosyvoice::testing::TinyBundle()                 \
                 << " (the fixture needs VOXSERVE_COSYVOICE_REF, an upstream checkout)"; \
  }

// A copy of the tiny bundle whose manifest `edit` changed; files named in `drop` are left out.
class BrokenBundle {
 public:
  BrokenBundle(const std::string& name, const std::function<void(nlohmann::json&)>& edit,
               std::vector<std::string> drop = {}) {
    namespace fs = std::filesystem;
    dir_ =
        fs::temp_directory_path() / ("cosyvoice-broken-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    for (const auto& entry : fs::directory_iterator(TinyBundle())) {
      std::string file = entry.path().filename().string();
      if (file == "manifest.json" || std::find(drop.begin(), drop.end(), file) != drop.end()) {
        continue;
      }
      fs::create_symlink(fs::absolute(entry.path()), dir_ / file);
    }
    std::ifstream in(fs::path(TinyBundle()) / "manifest.json");
    nlohmann::json manifest = nlohmann::json::parse(in);
    edit(manifest);
    std::ofstream(dir_ / "manifest.json") << manifest.dump(1);
  }
  ~BrokenBundle() { std::filesystem::remove_all(dir_); }
  std::string dir() const { return dir_.string(); }

 private:
  std::filesystem::path dir_;
};

}  // namespace voxserve::engine::cosyvoice::testing
