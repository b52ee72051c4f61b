#!/usr/bin/env bash
# Puts the ONNX Runtime SDK the image is built with into the build context, at DEST (build-image.sh
# passes deploy/docker/onnxruntime, the folder the Dockerfile's build stage reads), from one of the
# two routes docs/models.md describes:
#   ONNXRUNTIME_ROOT set: that SDK (the release archive onnxruntime-linux-x64[-gpu]-<version>
#                         unpacked, or any folder with include/ and lib/), nothing fetched;
#   otherwise:            the NuGet package, fetched by scripts/fetch-onnxruntime.sh [--gpu]
#                         (needs dotnet) into third_party/onnxruntime[/gpu].
#   stage-onnxruntime.sh [--gpu] DEST
# --gpu refuses an SDK without the CUDA provider. A link out of the SDK becomes a real file (docker
# sends links as links); the TensorRT provider is left out (voxserve never loads it, and it links
# TensorRT libraries no image here ships).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
gpu=()
[ "${1:-}" = --gpu ] && { gpu=(--gpu); shift; }
dest=${1:?usage: stage-onnxruntime.sh [--gpu] DEST}

if [ -n "${ONNXRUNTIME_ROOT:-}" ]; then
  sdk=$ONNXRUNTIME_ROOT
  route="ONNXRUNTIME_ROOT=$sdk"
else
  "$root/scripts/fetch-onnxruntime.sh" "${gpu[@]}"
  sdk=$root/third_party/onnxruntime${gpu:+/gpu}
  route="scripts/fetch-onnxruntime.sh ${gpu[*]}"
fi
fail() { echo "stage-onnxruntime: $route: $*" >&2; exit 1; }
[ -e "$sdk/lib/libonnxruntime.so.1" ] || [ -e "$sdk/lib/libonnxruntime.so" ] \
  || fail "no lib/libonnxruntime.so in $sdk (an SDK has include/ and lib/)"
[ -e "$sdk/include/onnxruntime_cxx_api.h" ] || fail "no include/onnxruntime_cxx_api.h in $sdk"
if [ ${#gpu[@]} -gt 0 ] && [ ! -e "$sdk/lib/libonnxruntime_providers_cuda.so" ]; then
  fail "$sdk is not a CUDA build of ONNX Runtime (no lib/libonnxruntime_providers_cuda.so):" \
       "use the onnxruntime-linux-x64-gpu archive or unset ONNXRUNTIME_ROOT"
fi

rm -rf "$dest" && mkdir -p "$dest/lib"
cp -rL "$sdk/include" "$dest/"
for lib in "$sdk"/lib/libonnxruntime*.so*; do
  case "$(basename "$lib")" in
    *providers_tensorrt*) ;;
    # A link beside its target stays a link (libonnxruntime.so -> .so.1 -> .so.1.31.1).
    *) if [[ -L "$lib" && "$(readlink "$lib")" != */* ]]; then cp -P "$lib" "$dest/lib/"
       else cp -L "$lib" "$dest/lib/"; fi ;;
  esac
done
echo "stage-onnxruntime: $(ls "$dest/lib" | tr '\n' ' ')from $route"
