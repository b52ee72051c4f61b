// A fresh directory under the test's temporary folder, removed with everything in it when the
// object goes. Owned by the test.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace voxserve::test_support {

class TempDir {
 public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "voxserve-XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
    EXPECT_FALSE(path_.empty()) << "mkdtemp failed";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The names of what `dir` holds, sorted.
inline std::vector<std::string> FilesIn(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    files.push_back(entry.path().filename());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace voxserve::test_support
