#!/usr/bin/env bash
# Builds the voxserve image from the repository's Dockerfile:
#   deploy/docker/build-image.sh [--prebuilt BIN_DIR] [TAG] [docker build arguments...]
# TAG defaults to voxserve:cpu. ONNX Runtime's SDK is fetched from NuGet on the host
# (scripts/fetch-onnxruntime.sh; the build stage has no .NET) and enters the build context as a
# plain folder. The build stage installs its Debian packages with apt, so the build runs on the
# host's network.
# --prebuilt BIN_DIR: package BIN_DIR/voxserve and BIN_DIR/voxctl instead of compiling them in the
# build stage (the Dockerfile's PREBUILT). Only for binaries built from this checkout on the image's
# Debian release (bookworm): `make test-deploy` passes its release build's bin/.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
prebuilt=""
if [ "${1:-}" = --prebuilt ]; then
  prebuilt=$(cd "${2:?--prebuilt needs a folder}" && pwd); shift 2
fi
tag=${1:-voxserve:cpu}; shift || true
"$root/scripts/fetch-onnxruntime.sh"
ort="$root/third_party/onnxruntime"
# docker build sends symbolic links as links: a checkout whose SDK folder is a link to another
# gets a real copy in the context.
if [ -L "$ort" ]; then
  target=$(readlink -f "$ort"); rm "$ort"; cp -a "$target" "$ort"
fi
cd "$root"
args=()
if [ -n "$prebuilt" ]; then
  # Into the context (build trees are .dockerignore'd), removed again afterwards.
  stage=deploy/docker/prebuilt
  rm -rf "$stage" && mkdir -p "$stage"
  trap 'rm -rf "$root/$stage"' EXIT
  cp "$prebuilt/voxserve" "$prebuilt/voxctl" "$stage/"
  args+=(--build-arg "PREBUILT=$stage")
fi
DOCKER_BUILDKIT=0 docker build --network host -f deploy/docker/Dockerfile -t "$tag" "${args[@]}" "$@" .
