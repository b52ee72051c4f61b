// A repository revision's files as the hub's API lists them
// (GET {endpoint}/api/models/{repo}/revision/{revision}?blobs=true), checked before any of it
// names a path on disk: the commit, and per file its path, size and the digest that names its
// blob in the cache (an LFS file's SHA-256, a plain file's git blob SHA-1).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace voxserve::hub {

struct RepoFile {
  std::string path;  // relative, '/'-separated, never absolute and never with ".."
  uint64_t size = 0;
  std::string blob_id;     // the git blob SHA-1 (40 hex digits)
  std::string lfs_sha256;  // 64 hex digits for a file kept in LFS; empty otherwise
  bool lfs() const { return !lfs_sha256.empty(); }
  // The cache names a blob by its ETag: an LFS file's SHA-256, otherwise its git blob SHA-1.
  const std::string& etag() const { return lfs() ? lfs_sha256 : blob_id; }
};

struct RepoListing {
  std::string commit;  // 40 hex digits
  std::vector<RepoFile> files;
};

// DataLoss naming what is wrong for an answer that is not such a listing (a proxy's page, a
// path that would leave the snapshot folder, a digest that is not hex).
absl::StatusOr<RepoListing> ParseRepoListing(std::string_view json);

// Whether `path` matches one of `patterns` as the hub's CLI matches --include (fnmatch: '*'
// crosses '/'; a pattern ending in '/' takes the folder's files). No patterns: every file.
bool MatchesAny(const std::string& path, const std::vector<std::string>& patterns);

// The --include pattern of one Piper voice in rhasspy/piper-voices, from its name as Piper
// spells it (LANG_REGION-VOICE-QUALITY, e.g. en_US-lessac-medium →
// en/en_US/lessac/medium/en_US-lessac-medium.onnx*: the graph and its .onnx.json).
// InvalidArgument for a name of another shape.
inline constexpr char kPiperVoicesRepo[] = "rhasspy/piper-voices";
absl::StatusOr<std::string> PiperVoiceInclude(const std::string& name);

}  // namespace voxserve::hub
