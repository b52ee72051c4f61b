// Finds the Piper voices and Kokoro models in a folder laid out as they are downloaded:
//   en_US-lessac-medium.onnx + en_US-lessac-medium.onnx.json      → piper  "en_US-lessac-medium"
//   kokoro-v1.0.onnx + voices-v1.0.bin (NPZ) in the same folder    → kokoro "kokoro-v1.0"
//   Kokoro-82M-v1.0-ONNX/onnx/model.onnx + Kokoro-82M-v1.0-ONNX/voices/*.bin
//                                                                  → kokoro "Kokoro-82M-v1.0-ONNX"
// Nothing is loaded here: a broken file is found when its model loads.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/engine_factory.h"

namespace voxserve::engine::onnx {

struct DiscoveredModels {
  std::vector<EngineSpec> models;  // sorted by path; ids are the file names without .onnx
  std::vector<std::string> notes;  // files that look like models but were not taken, and why
};

// Scans `dir` and its subfolders (6 levels). NotFound when `dir` is not a folder.
absl::StatusOr<DiscoveredModels> DiscoverModels(const std::string& dir);

}  // namespace voxserve::engine::onnx
