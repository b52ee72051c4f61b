#include "store/durable_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"
#include "spdlog/spdlog.h"

namespace voxserve::store {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kTempMarker = ".tmp-";

std::string ErrnoText() { return std::strerror(errno); }

// A failed write's error: a full disk (or quota) is 507, as a store past its own max_bytes is,
// with its own code; anything else (a read-only disk, an I/O error) is Internal, naming errno.
absl::Status WriteFailed(const std::string& what, int error) {
  const std::string message = what + ": " + std::strerror(error);
  if (error == ENOSPC || error == EDQUOT) return core::InsufficientStorage(message, "disk_full");
  return core::Internal(message);
}

}  // namespace

absl::Status SyncDirectory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return core::Internal("cannot open directory " + dir + ": " + ErrnoText());
  int rc = ::fsync(fd);
  std::string why = rc != 0 ? ErrnoText() : "";
  ::close(fd);
  if (rc != 0) return core::Internal("cannot sync directory " + dir + ": " + why);
  return absl::OkStatus();
}

absl::Status WriteAndSync(const std::string& path, std::string_view bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return WriteFailed("cannot create " + path, errno);
  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return WriteFailed("cannot write " + path, error);
    }
    written += static_cast<size_t>(n);
  }
  int rc = ::fsync(fd);
  int error = rc != 0 ? errno : 0;
  // close can report a deferred write error (NFS): it counts as a failed write.
  if (::close(fd) != 0 && rc == 0) {
    rc = -1;
    error = errno;
  }
  if (rc != 0) return WriteFailed("cannot sync " + path, error);
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadWhole(const std::string& path, size_t limit,
                                      std::string_view limit_name) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) return core::Internal("cannot stat " + path + ": " + ec.message());
  if (size > limit) return core::InvalidArgument("larger than " + std::string(limit_name));
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::Internal("cannot open " + path);
  std::string bytes(size, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(size));
  if (in.gcount() != static_cast<std::streamsize>(size)) {
    return core::Internal("short read of " + path);
  }
  return bytes;
}

std::string TempPathFor(const std::string& path) {
  const fs::path final_path(path);
  return (final_path.parent_path() / ("." + final_path.filename().string() +
                                      std::string(kTempMarker) + std::to_string(::getpid())))
      .string();
}

absl::Status ReplaceDurably(const std::string& path, std::string_view bytes) {
  const std::string temp = TempPathFor(path);
  std::error_code ec;
  if (absl::Status status = WriteAndSync(temp, bytes); !status.ok()) {
    fs::remove(temp, ec);
    return status;
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    std::string why = ErrnoText();
    fs::remove(temp, ec);
    return core::Internal("cannot rename " + temp + ": " + why);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<fs::directory_entry>> OpenStoreDirectory(const std::string& dir,
                                                                    std::string_view key,
                                                                    std::string_view log_name) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return core::Internal("cannot create " + std::string(key) + " " + dir + ": " + ec.message());
  }
  fs::directory_iterator it(dir, ec);
  if (ec) {
    return core::Internal("cannot read " + std::string(key) + " " + dir + ": " + ec.message());
  }
  std::vector<fs::directory_entry> entries;
  for (const fs::directory_entry& entry : it) {
    const std::string name = entry.path().filename().string();
    if (name.front() == '.' && name.find(kTempMarker) != std::string::npos) {
      // A write interrupted before its rename: the file it was to replace is still whole.
      spdlog::warn("{}: removing interrupted write {}", log_name, entry.path().string());
      fs::remove(entry.path(), ec);
      continue;
    }
    entries.push_back(entry);
  }
  return entries;
}

}  // namespace voxserve::store
