#include "server/pull_command.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "hub/hub_config.h"
#include "hub/model_pull.h"
#include "server/bundle_export.h"

namespace voxserve::server {
namespace {

std::string Size(uint64_t bytes) {
  if (bytes >= (1ull << 30)) return absl::StrFormat("%.2f GB", bytes / 1e9);
  if (bytes >= (1ull << 20)) return absl::StrFormat("%.1f MB", bytes / 1e6);
  if (bytes >= 1000) return absl::StrFormat("%.1f kB", bytes / 1e3);
  return absl::StrFormat("%d B", bytes);
}

// Progress on stderr: on a terminal one line per file redrawn in place (bar, bytes, rate); else
// plain lines a log keeps (start, retries, done).
class ProgressPrinter final : public hub::PullProgress {
 public:
  explicit ProgressPrinter(bool terminal) : terminal_(terminal) {}

  void Listed(const hub::RepoListing& listing, size_t files, uint64_t bytes) override {
    std::fprintf(stderr, "pulling %zu of %zu files (%s) at commit %s\n", files,
                 listing.files.size(), Size(bytes).c_str(), listing.commit.substr(0, 12).c_str());
  }
  void FileStarted(const hub::RepoFile& file, uint64_t resumed_at) override {
    started_ = Clock::now();
    start_bytes_ = resumed_at;
    last_draw_ = {};
    if (!terminal_) {
      std::fprintf(stderr, "  %s (%s)%s\n", file.path.c_str(), Size(file.size).c_str(),
                   resumed_at > 0 ? (" resuming at " + Size(resumed_at)).c_str() : "");
    }
  }
  void FileBytes(const hub::RepoFile& file, uint64_t bytes) override {
    if (!terminal_) return;
    const Clock::time_point now = Clock::now();
    if (now - last_draw_ < std::chrono::milliseconds(100) && bytes < file.size) return;
    last_draw_ = now;
    const double fraction = file.size > 0 ? static_cast<double>(bytes) / file.size : 1.0;
    const int filled = static_cast<int>(fraction * 24);
    const double seconds = std::chrono::duration<double>(now - started_).count();
    const double rate = seconds > 0 ? (bytes - start_bytes_) / seconds : 0;
    std::fprintf(stderr, "\r\033[K  %-40.40s [%s%s] %3.0f%% %s/%s %s/s", file.path.c_str(),
                 std::string(filled, '#').c_str(), std::string(24 - filled, ' ').c_str(),
                 fraction * 100, Size(bytes).c_str(), Size(file.size).c_str(),
                 Size(static_cast<uint64_t>(rate)).c_str());
  }
  void FileRetry(const hub::RepoFile& file, const std::string& why, int attempt) override {
    std::fprintf(stderr, "%s  %s: %s; resuming (attempt %d)\n", terminal_ ? "\r\033[K" : "",
                 file.path.c_str(), why.c_str(), attempt + 1);
  }
  void FileDone(const hub::RepoFile& file, bool from_cache) override {
    if (terminal_) {
      std::fprintf(stderr, "\r\033[K  %s (%s)%s\n", file.path.c_str(), Size(file.size).c_str(),
                   from_cache ? " already in the cache" : "");
    } else if (from_cache) {
      std::fprintf(stderr, "  %s (%s) already in the cache\n", file.path.c_str(),
                   Size(file.size).c_str());
    }
  }

 private:
  using Clock = std::chrono::steady_clock;
  bool terminal_;
  Clock::time_point started_, last_draw_;
  uint64_t start_bytes_ = 0;
};

int ExitCodeOf(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
      return 2;
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
      return 3;
    case absl::StatusCode::kNotFound:
      return 4;
    case absl::StatusCode::kUnavailable:
      return 5;
    case absl::StatusCode::kResourceExhausted:
      return 6;
    case absl::StatusCode::kDataLoss:
      return 7;
    default:
      return 1;
  }
}

}  // namespace

bool IsPullCommandLine(int argc, const char* const* argv) {
  return argc >= 2 && std::string_view(argv[1]) == "models";
}

int RunPullCommand(int argc, const char* const* argv) {
  CLI::App app{
      "Downloads a model repository from the Hugging Face hub (HF_ENDPOINT, HF_TOKEN, "
      "HF_HUB_CACHE or HF_HOME as the hub's own tools read them) into the hub's cache, and "
      "prints the folder to name in models[].path. An interrupted download resumes.",
      "voxserve models"};
  app.require_subcommand(1);
  CLI::App* pull = app.add_subcommand("pull", "download REPO (OWNER/NAME)");
  hub::PullRequest request;
  pull->add_option("repo", request.repo,
                   "the repository, OWNER/NAME (with --piper-voice: rhasspy/piper-voices)");
  std::vector<std::string> piper_voices;
  pull->add_option("--piper-voice", piper_voices,
                   "a Piper voice by name (e.g. en_US-lessac-medium): its graph and .onnx.json "
                   "out of rhasspy/piper-voices; repeatable");
  pull->add_option("--revision", request.revision, "branch, tag or commit")->capture_default_str();
  pull->add_option("--include", request.include,
                   "only files matching these patterns, as the hub's CLI takes them "
                   "(e.g. 'en/en_US/lessac/medium/*'); repeatable");
  pull->add_option("--dir", request.local_dir,
                   "also place the files in this folder (hard links to the cache, or copies)");
  std::string export_bundle;
  pull->add_option("--export", export_bundle,
                   "a CosyVoice checkpoint: turn it into a bundle in this folder with the export "
                   "image (docker), then check the bundle");
  std::string export_image = kDefaultExportImage;
  pull->add_option("--export-image", export_image, "the export image --export runs")
      ->capture_default_str();
  try {
    app.parse(argc - 1, argv + 1);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;
  }
  for (const std::string& voice : piper_voices) {
    auto include = hub::PiperVoiceInclude(voice);
    if (!include.ok()) {
      std::fprintf(stderr, "voxserve models pull: %s\n",
                   std::string(include.status().message()).c_str());
      return 2;
    }
    request.include.push_back(*include);
  }
  if (request.repo.empty()) {
    if (piper_voices.empty()) {
      std::fprintf(stderr,
                   "voxserve models pull: name a repository (OWNER/NAME) or "
                   "--piper-voice\n");
      return 2;
    }
    request.repo = hub::kPiperVoicesRepo;
  }
  hub::HubConfig config = hub::HubConfigFromEnvironment([](const std::string& name) {
    const char* value = std::getenv(name.c_str());
    return value ? std::optional<std::string>(value) : std::nullopt;
  });
  ProgressPrinter progress(isatty(STDERR_FILENO) == 1);
  auto pulled = hub::Pull(config, request, progress);
  if (!pulled.ok()) {
    std::fprintf(stderr, "voxserve models pull: %s\n",
                 std::string(pulled.status().message()).c_str());
    return ExitCodeOf(pulled.status());
  }
  std::fprintf(stderr, "%zu downloaded (%s), %zu already in the cache\n", pulled->downloaded,
               Size(pulled->bytes_downloaded).c_str(), pulled->cached);
  if (!export_bundle.empty()) {
    BundleExport exported;
    // The snapshot's files link into the repository's blobs/: mount the repository's folder.
    exported.mount =
        request.local_dir.empty() ? hub::RepoCacheDir(config, request.repo) : request.local_dir;
    exported.checkpoint = pulled->folder;
    exported.bundle = export_bundle;
    exported.image = export_image;
    if (absl::Status status = ExportBundle(exported); !status.ok()) {
      std::fprintf(stderr, "voxserve models pull: %s\n", std::string(status.message()).c_str());
      return status.code() == absl::StatusCode::kFailedPrecondition ? 2 : 8;
    }
    std::printf("%s\n", export_bundle.c_str());
    return 0;
  }
  std::printf("%s\n", pulled->folder.c_str());
  return 0;
}

}  // namespace voxserve::server
