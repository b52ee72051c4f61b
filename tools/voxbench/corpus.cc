#include "corpus.h"

#include <fstream>
#include <sstream>

namespace voxserve::voxbench {

std::vector<std::string> ParseCorpus(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    lines.push_back(line.substr(start));
  }
  return lines;
}

absl::StatusOr<std::vector<std::string>> LoadCorpus(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError("cannot read corpus " + path);
  std::stringstream text;
  text << file.rdbuf();
  std::vector<std::string> lines = ParseCorpus(text.str());
  if (lines.empty()) return absl::InvalidArgumentError("corpus " + path + " has no texts");
  return lines;
}

}  // namespace voxserve::voxbench
