// `voxserve models pull`: one revision of a hub repository into the hub's own cache layout
// ({cache}/models--OWNER--NAME/{blobs,snapshots,refs}, as huggingface_hub writes it, so a user's
// existing cache is reused and what is pulled here is theirs too), optionally also placed in a
// folder of the user's. Each file is downloaded to blobs/<etag>.incomplete, resumed with a Range
// after a cut connection (here, and in a later run), checked against the digest the hub lists
// (an LFS file's SHA-256, a plain file's git blob SHA-1) and only then kept; a file whose bytes do
// not match is deleted. Blocking; for the command line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hub/hub_config.h"
#include "hub/repo_listing.h"

namespace voxserve::hub {

struct PullRequest {
  std::string repo;                  // OWNER/NAME
  std::string revision = "main";     // a branch, a tag or a commit
  std::vector<std::string> include;  // fnmatch patterns (MatchesAny); empty: every file
  std::string local_dir;             // set: the files are also placed here (hard links or copies)
  int attempts = 5;                  // per file, a cut connection resumed each time
};

// What a pull reports as it goes (a terminal's progress bar, or plain lines).
class PullProgress {
 public:
  virtual ~PullProgress() = default;
  virtual void Listed(const RepoListing& /*listing*/, size_t /*files*/, uint64_t /*bytes*/) {}
  virtual void FileStarted(const RepoFile& /*file*/, uint64_t /*resumed_at*/) {}
  virtual void FileBytes(const RepoFile& /*file*/, uint64_t /*bytes*/) {}
  virtual void FileRetry(const RepoFile& /*file*/, const std::string& /*why*/, int /*attempt*/) {}
  virtual void FileDone(const RepoFile& /*file*/, bool /*from_cache*/) {}
};

struct PullResult {
  std::string commit;
  std::string snapshot_dir;  // {cache}/models--OWNER--NAME/snapshots/{commit}
  std::string folder;        // where to point `models` at: local_dir, else snapshot_dir
  size_t downloaded = 0;     // files fetched now
  size_t cached = 0;         // files the cache had already
  uint64_t bytes_downloaded = 0;
};

// Errors say what to do: Unauthenticated (401: private, gated or absent without a token: set
// HF_TOKEN), PermissionDenied (403: a gated repository whose conditions the token's account has
// not accepted), NotFound (the repository, the revision, or no file matching --include),
// Unavailable (the hub cannot be reached or failed after the attempts), ResourceExhausted (disk
// full: the partial file is kept and a later run resumes it), DataLoss (a file's bytes do not
// match the hub's digest: not kept).
absl::StatusOr<PullResult> Pull(const HubConfig& config, const PullRequest& request,
                                PullProgress& progress);

// The cache folder of a repository: {cache}/models--OWNER--NAME.
std::string RepoCacheDir(const HubConfig& config, const std::string& repo);

}  // namespace voxserve::hub
