#!/usr/bin/env bash
# Builds the voxserve image from the repository's Dockerfile:
#   deploy/docker/build-image.sh [TAG] [docker build arguments...]     (TAG default voxserve:cpu)
# ONNX Runtime's SDK is fetched from NuGet on the host (scripts/fetch-onnxruntime.sh; the build
# stage has no .NET) and enters the build context as a plain folder. The build stage installs its
# Debian packages with apt, so the build runs on the host's network.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
tag=${1:-voxserve:cpu}; shift || true
"$root/scripts/fetch-onnxruntime.sh"
ort="$root/third_party/onnxruntime"
# docker build sends symbolic links as links: a checkout whose SDK folder is a link to another
# gets a real copy in the context.
if [ -L "$ort" ]; then
  target=$(readlink -f "$ort"); rm "$ort"; cp -a "$target" "$ort"
fi
cd "$root"
DOCKER_BUILDKIT=0 docker build --network host -f deploy/docker/Dockerfile -t "$tag" "$@" .
