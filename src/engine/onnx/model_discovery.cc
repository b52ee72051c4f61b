#include "engine/onnx/model_discovery.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "core/error.h"

namespace voxserve::engine::onnx {
namespace {

namespace fs = std::filesystem;

// rhasspy/piper-voices' own layout (en/en_US/lessac/medium/*.onnx, as `voxserve models pull`
// leaves it) inside a folder of repositories, with a level to spare.
constexpr int kMaxDepth = 6;

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool IsFile(const fs::path& p) {
  std::error_code error;
  return fs::is_regular_file(p, error);
}

bool HasBinFiles(const fs::path& folder) {
  std::error_code error;
  if (!fs::is_directory(folder, error)) return false;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    if (entry.path().extension() == ".bin") return true;
  }
  return false;
}

// Voices for a Kokoro model: voices*.bin beside it (preferring the one whose name shares the
// model's version, e.g. kokoro-v1.0.int8.onnx → voices-v1.0.bin), else a voices/ folder beside
// it or one level up (onnx-community's repository layout).
std::string FindKokoroVoices(const fs::path& model, std::string& why_not) {
  std::vector<fs::path> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(model.parent_path(), error)) {
    std::string name = entry.path().filename().string();
    if (name.starts_with("voices") && EndsWith(name, ".bin") && IsFile(entry.path())) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  if (files.size() == 1) return files.front().string();
  if (files.size() > 1) {
    std::string stem = model.stem().string();  // "kokoro-v1.0.int8"
    for (const fs::path& file : files) {
      std::string version = file.stem().string().substr(6);  // "voices-v1.0" → "-v1.0"
      if (!version.empty() && stem.find(version) != std::string::npos) return file.string();
    }
    why_not = "several voices files beside it and none matches its version";
    return "";
  }
  for (const fs::path& folder :
       {model.parent_path() / "voices", model.parent_path().parent_path() / "voices"}) {
    if (HasBinFiles(folder)) return folder.string();
  }
  why_not = "neither a Piper voice (no " + model.filename().string() +
            ".json) nor a Kokoro model (no voices*.bin or voices/ beside it)";
  return "";
}

// onnx-community keeps model.onnx, model_quantized.onnx, ... in <repo>/onnx/: name them after
// the repository folder.
std::string KokoroModelId(const fs::path& model) {
  std::string stem = model.stem().string();
  if (stem.starts_with("model") && model.parent_path().filename() == "onnx" &&
      !model.parent_path().parent_path().filename().empty()) {
    return model.parent_path().parent_path().filename().string() + stem.substr(5);
  }
  return stem;
}

}  // namespace

absl::StatusOr<DiscoveredModels> DiscoverModels(const std::string& dir) {
  std::error_code error;
  if (!fs::is_directory(dir, error)) {
    return absl::NotFoundError("models folder " + dir + " does not exist or is not a folder");
  }
  std::vector<fs::path> onnx_files;
  std::vector<fs::path> piper_configs;
  auto it = fs::recursive_directory_iterator(dir,
                                             fs::directory_options::follow_directory_symlink |
                                                 fs::directory_options::skip_permission_denied,
                                             error);
  for (; !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with(".")) {
      if (it->is_directory(error)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory(error) && it.depth() + 1 >= kMaxDepth) it.disable_recursion_pending();
    if (!IsFile(it->path())) continue;
    if (EndsWith(name, ".onnx")) onnx_files.push_back(it->path());
    if (EndsWith(name, ".onnx.json")) piper_configs.push_back(it->path());
  }
  if (error) {
    return absl::PermissionDeniedError("cannot scan models folder " + dir + ": " + error.message());
  }
  std::sort(onnx_files.begin(), onnx_files.end());

  DiscoveredModels found;
  std::set<std::string> ids;
  for (const fs::path& model : onnx_files) {
    EngineSpec spec;
    fs::path config = model;
    config += ".json";
    if (IsFile(config)) {
      spec.engine = "piper";
      spec.model_id = model.stem().string();
      spec.options["model"] = model.string();
    } else {
      std::string why_not;
      std::string voices = FindKokoroVoices(model, why_not);
      if (voices.empty()) {
        found.notes.push_back("skipped " + model.string() + ": " + why_not);
        continue;
      }
      spec.engine = "kokoro";
      spec.model_id = KokoroModelId(model);
      spec.options["model"] = model.string();
      spec.options["voices"] = voices;
    }
    if (!ids.insert(spec.model_id).second) {
      found.notes.push_back("skipped " + model.string() + ": another model is already named '" +
                            spec.model_id + "'");
      continue;
    }
    found.models.push_back(std::move(spec));
  }
  // A voice config whose .onnx is missing is still a Piper model: loading it fails with an
  // error naming the missing file (or skips it, with skip_broken_models), like any broken one.
  for (const fs::path& config : piper_configs) {
    fs::path model = config;
    model.replace_extension();  // x.onnx.json → x.onnx
    if (IsFile(model) || !ids.insert(model.stem().string()).second) continue;
    found.models.push_back({model.stem().string(), "piper", "", {{"model", model.string()}}});
  }
  return found;
}

}  // namespace voxserve::engine::onnx
