#!/usr/bin/env bash
# Builds the voxserve image from the repository's Dockerfile:
#   deploy/docker/build-image.sh [--gpu] [--prebuilt BIN_DIR] [TAG] [docker build arguments...]
# TAG defaults to voxserve:cpu, with --gpu to voxserve:cuda. The ONNX Runtime SDK enters the build
# context as a plain folder (stage-onnxruntime.sh: the NuGet package fetched on the host, or your
# own with ONNXRUNTIME_ROOT; the build stage has no .NET). The build stage installs its Debian
# packages with apt, so the build runs on the host's network.
# --gpu: ONNX Runtime's CUDA build on NVIDIA's CUDA runtime image (cuda.env names it, the driver it
# needs and the libraries it must provide).
# --prebuilt BIN_DIR: package BIN_DIR/voxserve and BIN_DIR/voxctl instead of compiling them in the
# build stage (the Dockerfile's PREBUILT). Only for binaries built from this checkout on the image's
# Debian release (bookworm) against the same ONNX Runtime: `make test-deploy` passes its release
# build's bin/.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
gpu=()
prebuilt=""
while [ $# -gt 0 ]; do
  case "$1" in
    --gpu) gpu=(--gpu); shift ;;
    --prebuilt) prebuilt=$(cd "${2:?--prebuilt needs a folder}" && pwd); shift 2 ;;
    *) break ;;
  esac
done
default_tag=voxserve:cpu
[ ${#gpu[@]} -gt 0 ] && default_tag=voxserve:cuda
tag=${1:-$default_tag}
shift || true

# Into the context (third_party/ and build trees are .dockerignore'd), removed again afterwards.
cd "$root"
sdk=deploy/docker/onnxruntime stage=deploy/docker/prebuilt
trap 'rm -rf "$root/$sdk" "$root/$stage"' EXIT
"$here/stage-onnxruntime.sh" "${gpu[@]}" "$sdk"
args=()
if [ ${#gpu[@]} -gt 0 ]; then
  # shellcheck source=cuda.env
  . "$here/cuda.env"
  args+=(--build-arg "RUNTIME_IMAGE=$CUDA_RUNTIME_IMAGE")
fi
if [ -n "$prebuilt" ]; then
  # A binary asks ONNX Runtime for its own release's symbol version (VERS_1.31.1); another
  # release's library (the CUDA package is 1.31.0) cannot load it.
  has=$(readelf -V "$sdk"/lib/libonnxruntime.so.1 | grep -o 'VERS_[0-9.]*' | sort -u)
  for wants in $(readelf -V "$prebuilt/voxserve" | grep -o 'VERS_[0-9.]*' | sort -u); do
    if ! grep -qx "$wants" <<<"$has"; then
      echo "build-image: $prebuilt/voxserve was built against ONNX Runtime ${wants#VERS_}, the" \
           "image's has $(echo ${has//VERS_/}): build without --prebuilt (the image compiles" \
           "its own)" >&2
      exit 1
    fi
  done
  rm -rf "$stage" && mkdir -p "$stage"
  cp "$prebuilt/voxserve" "$prebuilt/voxctl" "$stage/"
  args+=(--build-arg "PREBUILT=$stage")
fi
DOCKER_BUILDKIT=0 docker build --network host -f deploy/docker/Dockerfile -t "$tag" "${args[@]}" "$@" .
