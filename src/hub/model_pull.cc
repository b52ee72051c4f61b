#include "hub/model_pull.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "absl/strings/str_replace.h"
#include "core/error.h"
#include "hub/file_digest.h"
#include "hub/http_fetch.h"

namespace voxserve::hub {
namespace {

namespace fs = std::filesystem;

std::string ErrnoText(int error) { return std::strerror(error); }

// The listing's status as the error the user can act on.
absl::Status ListingError(const HttpAnswer& answer, const HubConfig& config,
                          const PullRequest& request) {
  const std::string page = config.endpoint + "/" + request.repo;
  switch (answer.status) {
    case 0:
      return absl::UnavailableError("cannot reach the hub at " + config.endpoint + ": " +
                                    answer.error + " (HF_ENDPOINT names another one)");
    case 401:
      return core::Unauthenticated(
          config.token.empty()
              ? request.repo +
                    " is private or gated, or does not exist: set HF_TOKEN to an "
                    "access token that can read it (https://huggingface.co/settings/"
                    "tokens), or `huggingface-cli login`"
              : "the hub refused the token in HF_TOKEN for " + request.repo +
                    ": it is invalid or expired, or cannot read this repository",
          "hub_unauthorized");
    case 403:
      return core::PermissionDenied(request.repo + " is gated: accept its conditions on " + page +
                                        " with the account of your token, then run again",
                                    "repo", "hub_gated");
    case 404:
      if (answer.error_code == "RevisionNotFound") {
        return core::NotFound("no revision '" + request.revision + "' in " + request.repo +
                                  " (a branch, a tag or a commit of " + page + ")",
                              "revision", "hub_revision_not_found");
      }
      return core::NotFound("no repository " + request.repo + " on " + config.endpoint, "repo",
                            "hub_repo_not_found");
    default:
      return absl::UnavailableError("the hub answered HTTP " + std::to_string(answer.status) +
                                    " listing " + request.repo + "; try again later");
  }
}

// ../ once per folder between a snapshot file and the repository folder, then blobs/<etag>.
std::string BlobLinkTarget(const RepoFile& file) {
  std::string target = "../../";
  for (char c : file.path) {
    if (c == '/') target += "../";
  }
  return target + "blobs/" + file.etag();
}

absl::Status LinkSnapshotFile(const fs::path& snapshot, const RepoFile& file) {
  const fs::path link = snapshot / file.path;
  const std::string target = BlobLinkTarget(file);
  std::error_code error;
  fs::create_directories(link.parent_path(), error);
  if (error)
    return absl::InternalError("cannot create " + link.parent_path().string() + ": " +
                               error.message());
  if (fs::is_symlink(link, error) && fs::read_symlink(link, error) == target) {
    return absl::OkStatus();
  }
  fs::remove(link, error);
  fs::create_symlink(target, link, error);
  if (error) return absl::InternalError("cannot link " + link.string() + ": " + error.message());
  return absl::OkStatus();
}

// The file in the user's folder: a hard link to the blob, or a copy across file systems.
absl::Status PlaceInFolder(const fs::path& folder, const fs::path& blob, const RepoFile& file) {
  const fs::path target = folder / file.path;
  std::error_code error;
  fs::create_directories(target.parent_path(), error);
  if (error)
    return absl::InternalError("cannot create " + target.parent_path().string() + ": " +
                               error.message());
  if (fs::exists(target, error) && fs::equivalent(target, blob, error)) return absl::OkStatus();
  const fs::path temporary = target.string() + ".voxserve-part";
  fs::remove(temporary, error);
  fs::create_hard_link(blob, temporary, error);
  if (error) {
    error.clear();
    fs::copy_file(blob, temporary, fs::copy_options::overwrite_existing, error);
  }
  if (!error) fs::rename(temporary, target, error);
  if (error) {
    fs::remove(temporary, error);
    return absl::InternalError("cannot place " + target.string() + ": " + error.message());
  }
  return absl::OkStatus();
}

absl::Status WriteRef(const fs::path& repo_dir, const std::string& revision,
                      const std::string& commit) {
  const fs::path ref = repo_dir / "refs" / revision;
  std::error_code error;
  fs::create_directories(ref.parent_path(), error);
  std::ofstream out(ref, std::ios::trunc);
  out << commit;
  out.close();
  if (!out) return absl::InternalError("cannot write " + ref.string());
  return absl::OkStatus();
}

absl::Status Verify(const std::string& path, const RepoFile& file) {
  auto digest = file.lfs() ? Sha256Hex(path) : GitBlobSha1Hex(path);
  if (!digest.ok()) return digest.status();
  if (*digest == file.etag()) return absl::OkStatus();
  return absl::DataLossError(file.path + ": its bytes do not match the hub's " +
                             (file.lfs() ? "SHA-256 " : "git blob SHA-1 ") + file.etag() +
                             " (got " + *digest + "); the download was not kept, run again");
}

class FileCloser {
 public:
  explicit FileCloser(std::FILE* file) : file_(file) {}
  ~FileCloser() {
    if (file_) std::fclose(file_);
  }
  std::FILE* get() const { return file_; }
  int Close() {
    int result = std::fclose(file_);
    file_ = nullptr;
    return result;
  }

 private:
  std::FILE* file_;
};

// Fetches one file into its blob: resumes a partial download, retries a cut connection, and
// keeps the bytes only once their digest matches.
absl::Status FetchBlob(const HubConfig& config, const PullRequest& request,
                       const std::string& commit, const RepoFile& file, const fs::path& blob,
                       PullProgress& progress, uint64_t& bytes_downloaded) {
  const std::string partial = blob.string() + ".incomplete";
  std::error_code error;
  uint64_t offset = fs::exists(partial, error) ? fs::file_size(partial, error) : 0;
  if (error || offset > file.size) offset = 0;
  FileCloser out(std::fopen(partial.c_str(), offset > 0 ? "ab" : "wb"));
  if (!out.get()) {
    return absl::InternalError("cannot write " + partial + ": " + ErrnoText(errno));
  }
  const std::string url = config.endpoint + "/" + request.repo + "/resolve/" + commit + "/" +
                          UrlEncode(file.path, /*keep_slashes=*/true);
  FetchOptions options;
  options.token = config.token;
  progress.FileStarted(file, offset);
  for (int attempt = 1;; ++attempt) {
    const uint64_t before = offset;
    Download download = DownloadTo(url, out.get(), offset, options,
                                   [&](uint64_t written) { progress.FileBytes(file, written); });
    offset = download.written;
    bytes_downloaded += offset >= before ? offset - before : offset;
    if (download.write_failed) {
      if (download.write_errno == ENOSPC || download.write_errno == EDQUOT) {
        return absl::ResourceExhaustedError(
            "disk full writing " + partial + " (" + std::to_string(offset) + " of " +
            std::to_string(file.size) + " bytes): free space and run again, it resumes there");
      }
      return absl::InternalError("cannot write " + partial + ": " +
                                 ErrnoText(download.write_errno));
    }
    const long status = download.answer.status;
    if (status / 100 == 2 && offset == file.size) break;
    std::string why;
    if (status == 401 || status == 403 || status == 404) {
      return ListingError(download.answer, config, request);
    } else if (status / 100 == 2) {
      why = "the connection ended after " + std::to_string(offset) + " of " +
            std::to_string(file.size) + " bytes";
      if (offset > file.size) offset = 0;  // more than listed: start over
    } else if (status == 0) {
      why = download.answer.error + " after " + std::to_string(offset) + " of " +
            std::to_string(file.size) + " bytes";
    } else if (status == 416) {
      why = "the server refused to resume at byte " + std::to_string(offset);
      offset = 0;
    } else {
      why = "HTTP " + std::to_string(status);
    }
    if (attempt >= request.attempts) {
      return absl::UnavailableError("downloading " + file.path + " failed " +
                                    std::to_string(attempt) + " times (last: " + why +
                                    "); run again to resume");
    }
    progress.FileRetry(file, why, attempt);
    if (offset == 0 && std::ftell(out.get()) != 0) {
      if (ftruncate(fileno(out.get()), 0) != 0 || std::fseek(out.get(), 0, SEEK_SET) != 0) {
        return absl::InternalError("cannot rewrite " + partial + ": " + ErrnoText(errno));
      }
    }
    // A short pause, longer each time: a hub or CDN that just failed gets a moment.
    std::this_thread::sleep_for(std::chrono::milliseconds(250 * attempt));
  }
  if (out.Close() != 0) return absl::InternalError("cannot write " + partial);
  if (absl::Status verified = Verify(partial, file); !verified.ok()) {
    fs::remove(partial, error);
    return verified;
  }
  fs::rename(partial, blob, error);
  if (error) return absl::InternalError("cannot keep " + blob.string() + ": " + error.message());
  return absl::OkStatus();
}

}  // namespace

std::string RepoCacheDir(const HubConfig& config, const std::string& repo) {
  return (fs::path(config.cache_dir) / ("models--" + absl::StrReplaceAll(repo, {{"/", "--"}})))
      .string();
}

absl::StatusOr<PullResult> Pull(const HubConfig& config, const PullRequest& request,
                                PullProgress& progress) {
  if (absl::Status valid = ValidateRepoId(request.repo); !valid.ok()) return valid;
  // The revision names a file under refs/: nothing that would leave it.
  const fs::path revision_path(request.revision);
  bool revision_ok =
      !request.revision.empty() && request.revision.size() <= 256 && revision_path.is_relative();
  for (const fs::path& part : revision_path) {
    revision_ok = revision_ok && part != ".." && part != "." && !part.empty();
  }
  for (char c : request.revision) revision_ok = revision_ok && static_cast<unsigned char>(c) > 0x20;
  if (!revision_ok) {
    return core::InvalidArgument(
        "--revision '" + request.revision + "' is not a branch, tag or commit name", "revision");
  }
  FetchOptions options;
  options.token = config.token;
  const HttpAnswer answer = GetText(config.endpoint + "/api/models/" + request.repo + "/revision/" +
                                        UrlEncode(request.revision) + "?blobs=true",
                                    options);
  if (answer.status != 200) return ListingError(answer, config, request);
  auto listing = ParseRepoListing(answer.body);
  if (!listing.ok()) return listing.status();

  std::vector<const RepoFile*> selected;
  uint64_t bytes = 0;
  for (const RepoFile& file : listing->files) {
    if (!MatchesAny(file.path, request.include)) continue;
    selected.push_back(&file);
    bytes += file.size;
  }
  if (selected.empty()) {
    return core::NotFound("no file of " + request.repo + " at " + request.revision +
                              " matches --include (" + std::to_string(listing->files.size()) +
                              " files listed)",
                          "include", "hub_no_matching_file");
  }
  progress.Listed(*listing, selected.size(), bytes);

  PullResult result;
  result.commit = listing->commit;
  const fs::path repo_dir = RepoCacheDir(config, request.repo);
  const fs::path blobs = repo_dir / "blobs";
  const fs::path snapshot = repo_dir / "snapshots" / listing->commit;
  std::error_code error;
  fs::create_directories(blobs, error);
  if (!error) fs::create_directories(snapshot, error);
  if (error) {
    return absl::InternalError("cannot create the hub cache at " + repo_dir.string() + ": " +
                               error.message() + " (HF_HUB_CACHE or HF_HOME moves it)");
  }
  for (const RepoFile* file : selected) {
    const fs::path blob = blobs / file->etag();
    const bool cached = fs::exists(blob, error) && fs::file_size(blob, error) == file->size;
    if (!cached) {
      absl::Status fetched = FetchBlob(config, request, listing->commit, *file, blob, progress,
                                       result.bytes_downloaded);
      if (!fetched.ok()) return fetched;
    }
    if (absl::Status linked = LinkSnapshotFile(snapshot, *file); !linked.ok()) return linked;
    if (!request.local_dir.empty()) {
      if (absl::Status placed = PlaceInFolder(request.local_dir, blob, *file); !placed.ok()) {
        return placed;
      }
    }
    ++(cached ? result.cached : result.downloaded);
    progress.FileDone(*file, cached);
  }
  if (request.revision != listing->commit) {
    if (absl::Status ref = WriteRef(repo_dir, request.revision, listing->commit); !ref.ok()) {
      return ref;
    }
  }
  result.snapshot_dir = snapshot.string();
  result.folder = request.local_dir.empty() ? result.snapshot_dir : request.local_dir;
  return result;
}

}  // namespace voxserve::hub
