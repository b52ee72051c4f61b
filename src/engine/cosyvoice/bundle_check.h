// `voxserve check-model`: a bundle against its manifest. Every graph is opened with ONNX Runtime
// and its inputs/outputs (names, element types, ranks, fixed sizes) compared with the manifest;
// tensors (.npy headers), the noise tensor's shape, tokenizer files and the goldens index are
// checked too. Every problem is reported, each naming the file, graph or tensor, and what was
// expected vs found.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/cosyvoice/bundle_manifest.h"

namespace voxserve::engine::cosyvoice {

// Owned by value.
struct BundleReport {
  std::string dir;
  std::optional<BundleManifest> manifest;  // set when manifest.json parsed and validated
  std::vector<std::string> problems;

  bool ok() const { return manifest.has_value() && problems.empty(); }
  // One line per graph and tensor group when ok, else every problem.
  std::string Summary() const;
};

// Blocking (opens every graph: seconds for a real-size bundle). Safe cross thread.
BundleReport CheckBundle(const std::string& dir);

// CheckBundle for loaders: the manifest, or InvalidArgument carrying every problem.
absl::StatusOr<BundleManifest> LoadCheckedBundle(const std::string& dir);

}  // namespace voxserve::engine::cosyvoice
