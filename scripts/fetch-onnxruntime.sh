#!/usr/bin/env bash
# Fetches the pinned ONNX Runtime C/C++ SDK from NuGet into third_party/onnxruntime/ (ignored by
# git) and lays it out like the official release archive onnxruntime-linux-x64-<version>.tgz:
#   include/onnxruntime_cxx_api.h ...   lib/libonnxruntime.so -> .so.1 -> .so.<version>
# so CMake finds either the same way (cmake/OnnxRuntime.cmake).
#
#   scripts/fetch-onnxruntime.sh          CPU package Microsoft.ML.OnnxRuntime
#   scripts/fetch-onnxruntime.sh --gpu    CUDA package Microsoft.ML.OnnxRuntime.Gpu.Linux into
#                                         third_party/onnxruntime/gpu (configure a build with
#                                         -DVOXSERVE_ONNXRUNTIME_GPU=ON)
#
# NuGet is only the delivery channel: `dotnet restore` of a throw-away project that names the
# package downloads the .nupkg (a zip); no .NET code is built or run. The .nupkg's SHA-256 is
# checked against the value pinned below before anything is unpacked.
# With ONNXRUNTIME_ROOT set (your own ORT, e.g. the release archive unpacked), nothing is fetched.
set -euo pipefail

flavor=cpu
for arg in "$@"; do
  case "$arg" in
    --gpu) flavor=gpu ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "fetch-onnxruntime: unknown argument '$arg' (allowed: --gpu)" >&2; exit 2 ;;
  esac
done

root="$(cd "$(dirname "$0")/.." && pwd)"
if [ "$flavor" = cpu ]; then
  package=Microsoft.ML.OnnxRuntime
  version=1.31.1
  sha256=6871ccbc97f3d5bdb4095a1dcec33aa78d56f6ed8de5980ef5fa1d9f2e7c679a
  dest="$root/third_party/onnxruntime"
else
  # The GPU package is published a step behind the CPU one on the NuGet feed this project uses.
  # It carries no headers: they are taken from the CPU SDK (same C API version, 31), so that is
  # fetched first. At run time it needs CUDA 13 (cudart, cublas, curand) and cuDNN.
  package=Microsoft.ML.OnnxRuntime.Gpu.Linux
  version=1.31.0
  sha256=7cd256a2b6a0713a55bbb7f60b175ff004d462d56a07572a15a2ed07456514d7
  dest="$root/third_party/onnxruntime/gpu"
fi

if [ -n "${ONNXRUNTIME_ROOT:-}" ]; then
  echo "fetch-onnxruntime: ONNXRUNTIME_ROOT=$ONNXRUNTIME_ROOT is set; using that ONNX Runtime"
  exit 0
fi
if [ "$flavor" = gpu ]; then
  "$0"  # the CPU SDK first, for the headers
fi
stamp="$dest/VERSION"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$package $version $sha256" ]; then
  exit 0
fi

if ! command -v dotnet >/dev/null 2>&1; then
  cat >&2 <<EOF
fetch-onnxruntime: 'dotnet' is not installed, so the NuGet package cannot be restored.
Either install the .NET SDK, or download the official release archive
onnxruntime-linux-x64-$version.tgz from the ONNX Runtime releases page on GitHub, unpack it and
point the build at it:  export ONNXRUNTIME_ROOT=/path/to/onnxruntime-linux-x64-$version
EOF
  exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# PackageDownload fetches the package without resolving a .NET target for it.
cat >"$work/fetch.csproj" <<EOF
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup><TargetFramework>net$(dotnet --version | cut -d. -f1).0</TargetFramework></PropertyGroup>
  <ItemGroup><PackageDownload Include="$package" Version="[$version]" /></ItemGroup>
</Project>
EOF
echo "fetch-onnxruntime: restoring $package $version from NuGet"
# Certificate revocation lists are out of reach on build machines without general internet;
# the pinned SHA-256 below is what vouches for the package.
NUGET_CERT_REVOCATION_MODE=${NUGET_CERT_REVOCATION_MODE:-offline} \
DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 \
  dotnet restore "$work/fetch.csproj" --packages "$work/packages" >"$work/restore.log" 2>&1 || {
  cat "$work/restore.log" >&2
  echo "fetch-onnxruntime: dotnet restore of $package $version failed" >&2
  exit 1
}
pkgdir="$work/packages/$(echo "$package" | tr '[:upper:]' '[:lower:]')/$version"
nupkg="$pkgdir/$(echo "$package" | tr '[:upper:]' '[:lower:]').$version.nupkg"
actual="$(sha256sum "$nupkg" | cut -d' ' -f1)"
if [ "$actual" != "$sha256" ]; then
  echo "fetch-onnxruntime: checksum mismatch for $nupkg: expected $sha256, got $actual" >&2
  exit 1
fi

# Lay out include/ and lib/ like the release archive (real file + soname links).
rm -rf "$dest/include" "$dest/lib"
mkdir -p "$dest/include" "$dest/lib"
if [ "$flavor" = gpu ]; then
  cp "$root"/third_party/onnxruntime/include/* "$dest/include/"
else
  cp "$pkgdir"/build/native/include/* "$dest/include/"
fi
native="$pkgdir/runtimes/linux-x64/native"
for lib in "$native"/*.so; do
  name="$(basename "$lib")"
  if [ "$name" = libonnxruntime.so ]; then
    cp "$lib" "$dest/lib/libonnxruntime.so.$version"
    ln -sf "libonnxruntime.so.$version" "$dest/lib/libonnxruntime.so.1"
    ln -sf libonnxruntime.so.1 "$dest/lib/libonnxruntime.so"
  else
    cp "$lib" "$dest/lib/$name"
  fi
done
cp "$pkgdir/LICENSE" "$pkgdir/ThirdPartyNotices.txt" "$dest/" 2>/dev/null || true
echo "$package $version $sha256" >"$stamp"
echo "fetch-onnxruntime: $package $version (sha256 $sha256) installed in $dest"
