#include "hub/repo_listing.h"

#include <fnmatch.h>

#include <regex>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"

namespace voxserve::hub {
namespace {

using nlohmann::json;

bool IsHex(const std::string& text, size_t length) {
  if (text.size() != length) return false;
  for (char c : text) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// A path inside the snapshot folder: relative, no empty, "." or ".." component, no backslash or
// control character (which a file system or a terminal would read otherwise).
bool SafeRelativePath(const std::string& path) {
  if (path.empty() || path.size() > 1024 || path.front() == '/') return false;
  for (char c : path) {
    if (c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part.empty() || part == "." || part == "..") return false;
  }
  return true;
}

absl::Status Bad(const std::string& what) {
  return absl::DataLossError("the hub's file listing " + what);
}

}  // namespace

absl::StatusOr<RepoListing> ParseRepoListing(std::string_view text) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return Bad("is not a JSON object (a proxy's page?)");
  RepoListing listing;
  if (!doc.contains("sha") || !doc["sha"].is_string() ||
      !IsHex(doc["sha"].get<std::string>(), 40)) {
    return Bad("has no commit id ('sha')");
  }
  listing.commit = absl::AsciiStrToLower(doc["sha"].get<std::string>());
  if (!doc.contains("siblings") || !doc["siblings"].is_array()) return Bad("has no 'siblings'");
  for (const json& entry : doc["siblings"]) {
    RepoFile file;
    if (!entry.is_object() || !entry.contains("rfilename") || !entry["rfilename"].is_string()) {
      return Bad("has an entry without a file name");
    }
    file.path = entry["rfilename"].get<std::string>();
    if (!SafeRelativePath(file.path)) {
      return Bad("names a path outside the repository: '" + file.path + "'");
    }
    if (!entry.contains("blobId") || !entry["blobId"].is_string() ||
        !IsHex(entry["blobId"].get<std::string>(), 40) || !entry.contains("size") ||
        !entry["size"].is_number_unsigned()) {
      return Bad("lacks the blob id or size of '" + file.path + "' (asked with blobs=true)");
    }
    file.blob_id = absl::AsciiStrToLower(entry["blobId"].get<std::string>());
    file.size = entry["size"].get<uint64_t>();
    if (entry.contains("lfs") && entry["lfs"].is_object()) {
      const json& lfs = entry["lfs"];
      if (!lfs.contains("sha256") || !lfs["sha256"].is_string() ||
          !IsHex(lfs["sha256"].get<std::string>(), 64)) {
        return Bad("has an LFS file without its SHA-256: '" + file.path + "'");
      }
      file.lfs_sha256 = absl::AsciiStrToLower(lfs["sha256"].get<std::string>());
      if (lfs.contains("size") && lfs["size"].is_number_unsigned()) {
        file.size = lfs["size"].get<uint64_t>();
      }
    }
    listing.files.push_back(std::move(file));
  }
  return listing;
}

absl::StatusOr<std::string> PiperVoiceInclude(const std::string& name) {
  static const std::regex kName("([a-z]{2,3})_([A-Z]{2})-([A-Za-z0-9_]+)-(x_low|low|medium|high)");
  std::smatch parts;
  if (!std::regex_match(name, parts, kName)) {
    return absl::InvalidArgumentError(
        "Piper voice '" + name +
        "': expected LANG_REGION-VOICE-QUALITY as in rhasspy/piper-voices (e.g. "
        "en_US-lessac-medium; quality x_low, low, medium or high)");
  }
  return parts[1].str() + "/" + parts[1].str() + "_" + parts[2].str() + "/" + parts[3].str() + "/" +
         parts[4].str() + "/" + name + ".onnx*";
}

bool MatchesAny(const std::string& path, const std::vector<std::string>& patterns) {
  if (patterns.empty()) return true;
  for (const std::string& pattern : patterns) {
    const std::string effective = pattern.ends_with('/') ? pattern + "*" : pattern;
    if (fnmatch(effective.c_str(), path.c_str(), 0) == 0) return true;
  }
  return false;
}

}  // namespace voxserve::hub
