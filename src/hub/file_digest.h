// The digests the hub names files by, computed over a file on disk: SHA-256 (an LFS file's
// ETag) and the git blob SHA-1 (a plain file's: SHA-1 of "blob <size>\0" + the bytes).
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace voxserve::hub {

absl::StatusOr<std::string> Sha256Hex(const std::string& path);
absl::StatusOr<std::string> GitBlobSha1Hex(const std::string& path);

}  // namespace voxserve::hub
