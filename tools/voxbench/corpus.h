// The texts voxbench sends: one per line of a UTF-8 file; blank lines and lines starting with
// '#' are skipped. Requests draw from it uniformly at random (seeded, so runs repeat).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace voxserve::voxbench {

absl::StatusOr<std::vector<std::string>> LoadCorpus(const std::string& path);
std::vector<std::string> ParseCorpus(const std::string& text);

}  // namespace voxserve::voxbench
