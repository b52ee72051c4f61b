// Files that survive a crash, for the stores that keep one file per object (cloned voices,
// pronunciation dictionaries). The pattern: write a temporary file in the same directory and
// fsync it (WriteAndSync), rename it over the final name, then fsync the directory
// (SyncDirectory) so the rename itself is on disk. POSIX leaves that last step to the caller.
// Plain functions; safe from any thread on distinct paths.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace voxserve::service {

// fsync on the directory: makes a rename or unlink in it durable. Internal on failure.
absl::Status SyncDirectory(const std::string& dir);

// Creates `path` (which must not exist: a stale temporary file is an error, not overwritten),
// writes all of `bytes` and fsyncs it. On failure the caller removes what was left: a full disk
// (ENOSPC, EDQUOT) is InsufficientStorage (507) code "disk_full", anything else Internal.
absl::Status WriteAndSync(const std::string& path, std::string_view bytes);

// The whole of `path`. InvalidArgument when it is larger than `limit` bytes (the message names
// the configuration key `limit_name`), so a stray huge file is never read into memory; Internal
// when it cannot be read.
absl::StatusOr<std::string> ReadWhole(const std::string& path, size_t limit,
                                      std::string_view limit_name);

}  // namespace voxserve::service
