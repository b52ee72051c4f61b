#!/usr/bin/env bash
# Lays out the runtime image's files under ROOT: the binaries in /usr/local/bin, every shared
# library they load that the base image may lack in /usr/local/lib/voxserve (found with ldd, so the
# list follows the build instead of being kept by hand), espeak-ng's data where the library looks
# for it, and the CA bundle (`voxserve models pull` reaches the hub over HTTPS; an mTLS setup may name it).
#   collect-runtime.sh ROOT BINARY...
set -euo pipefail
root=$1; shift
mkdir -p "$root/usr/local/bin" "$root/usr/local/lib/voxserve" "$root/etc/ssl/certs"
for bin in "$@"; do
  install -m 0755 "$bin" "$root/usr/local/bin/"
  # glibc's own libraries come with every base image (and must match its loader); all else is ours.
  ldd "$bin" | awk '/=> \// {print $3}' \
    | grep -Ev '/(libc|libm|libdl|libpthread|librt|ld-linux-x86-64|libresolv)\.so' \
    | while read -r lib; do cp -Lu "$lib" "$root/usr/local/lib/voxserve/"; done
done
# ONNX Runtime loads its provider libraries by name at run time, not through ldd's list: the
# ones beside the libonnxruntime.so.1 the binaries load (the CUDA provider in the CUDA image).
ort=$(ldd "$1" | awk '$1 == "libonnxruntime.so.1" {print $3}')
if [ -n "$ort" ]; then
  for lib in "$(dirname "$ort")"/libonnxruntime_providers_*.so; do
    if [ -e "$lib" ]; then cp -L "$lib" "$root/usr/local/lib/voxserve/"; fi
  done
fi
data=$(dirname "$(dpkg -L espeak-ng-data | grep -m1 '/espeak-ng-data/phontab$')")
mkdir -p "$root$(dirname "$data")"
cp -a "$data" "$root$(dirname "$data")/"
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
strip --strip-unneeded "$root"/usr/local/bin/* "$root"/usr/local/lib/voxserve/*.so* 2>/dev/null || true
mkdir -p "$root/models" "$root/voices"
# The image's user writes cloned voices, and `models pull` into a models volume (compose.single).
chown 10001:10001 "$root/voices" "$root/models"
