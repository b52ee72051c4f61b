// Files that survive a crash, for the stores that keep one file per object (cloned voices,
// pronunciation dictionaries). The pattern: write a temporary file in the same directory and
// fsync it (WriteAndSync), rename it over the final name, then fsync the directory
// (SyncDirectory) so the rename itself is on disk. POSIX leaves that last step to the caller.
// ReplaceDurably does the first three; OpenStoreDirectory, at startup, removes the temporary
// files that a crash left behind. Plain functions; safe from any thread on distinct paths.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace voxserve::store {

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

// The temporary name a write that replaces `path` uses: a dot file beside it, marked with this
// process's id, so that two processes sharing a directory never write the same one.
std::string TempPathFor(const std::string& path);

// Writes `bytes` to TempPathFor(path), fsyncs it and renames it over `path`; on failure nothing
// is left behind and `path` is as it was. The directory is not synced: the caller decides what a
// failure of SyncDirectory means (before or after the old file is gone).
absl::Status ReplaceDurably(const std::string& path, std::string_view bytes);

// A store's directory at startup: created when missing (`key` names its setting in errors,
// "voices.dir"); the temporary files of writes a crash interrupted are removed, with a warning
// under `log_name`; every other entry is returned, for the store to load or skip.
absl::StatusOr<std::vector<std::filesystem::directory_entry>> OpenStoreDirectory(
    const std::string& dir, std::string_view key, std::string_view log_name);

}  // namespace voxserve::store
