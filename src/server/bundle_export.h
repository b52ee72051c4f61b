// `voxserve models pull --export BUNDLE`: the pulled CosyVoice checkpoint turned into a bundle by
// the export image (deploy/docker/export.Dockerfile: Debian's PyTorch and upstream CosyVoice at
// the pinned commit, so no Python setup on the host) run through docker, as the user who runs
// voxserve, then checked as `voxserve check-model` checks it. Blocking; for the command line.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace voxserve::server {

inline constexpr char kDefaultExportImage[] = "voxserve-export:latest";

struct BundleExport {
  std::string mount;       // the folder mounted read-only: holds the checkpoint and what its
                           // links point to (the hub cache's repository folder, or --dir)
  std::string checkpoint;  // the checkpoint folder, inside `mount`
  std::string bundle;      // where the bundle goes (its parent folder is mounted writable)
  std::string image = kDefaultExportImage;
};

// FailedPrecondition without docker (saying what to do instead); Internal when the export image
// failed (its output went to stderr); DataLoss when the bundle it wrote does not check out.
absl::Status ExportBundle(const BundleExport& request);

}  // namespace voxserve::server
