#!/usr/bin/env bash
# Installs the Debian packages voxserve builds, runs and tests with. Idempotent: asks apt only for
# packages that are missing, so a second run costs a dpkg query and nothing else.
set -euo pipefail

# --build-only: what building voxserve, voxctl and voxbench needs and nothing more (the container
# image's build stage, deploy/docker/Dockerfile); without it, also everything the tests use.
build_only=false
[ "${1:-}" = --build-only ] && build_only=true

build_packages=(
  build-essential cmake ninja-build pkg-config ca-certificates
  # libraries (see shared/reference/build-facts.md for the versions this is checked against)
  libboost-dev libboost-system-dev libabsl-dev libssl-dev
  libespeak-ng-dev espeak-ng-data libsndfile1-dev libsoxr-dev libsonic-dev libicu-dev
  libavcodec-dev libavutil-dev
  libfftw3-dev  # audio/features: the STFTs of CosyVoice's prompt features (fftw3f)
  libvorbis-dev libogg-dev  # audio/ogg_vorbis_headers: Vorbis headers checked before libsndfile
  nlohmann-json3-dev libspdlog-dev libcli11-dev libyaml-cpp-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  libzip-dev  # Kokoro's NPZ voice files
  libpq-dev  # voices.backend postgres: the shared voice registry (libpq)
  libexpat1-dev  # text/ssml: the SSML parser (DTDs refused: no entity expansion)
  libcurl4-openssl-dev  # hub/: `voxserve models pull` downloads from the Hugging Face hub
  libavahi-core-dev  # Wyoming's zeroconf announcement (Avahi's embedded mDNS responder)
)
packages=(
  "${build_packages[@]}"
  ccache
  clang-14 libclang-rt-14-dev llvm-14  # the fuzz targets (libFuzzer; llvm-symbolizer for traces)
  # tests and benchmarks
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-pytest python3-requests python3-numpy python3-soundfile
  python3-grpcio python3-grpc-tools python3-websockets
  python3-zeroconf  # the mDNS browser Home Assistant uses: Wyoming's discovery test
  python3-onnx  # tests build tiny Piper/Kokoro graphs (tests/onnx_models)
  python3-torch python3-torchaudio  # oracles of the audio feature tests (tests/unit/audio)
  python3-regex python3-inflect  # CosyVoice text tests: the Qwen2 pre-tokenizer regex, upstream's number words
  python3-omegaconf python3-scipy  # upstream CosyVoice imports them (flow.py, class_utils.py -> hifigan): the export tool, the oracle tests
  espeak-ng  # the command line: test_onnx_models recomputes phonemes independently of the server
  curl wrk
  python3-fastapi python3-uvicorn  # bench/workers_bench.sh: the FastAPI + uvicorn peer
  gnuplot-nox  # voxbench --plot
  postgresql  # the shared voice registry's tests start a real server (initdb as an unprivileged user)
  openssl prometheus  # security tests: test certificates; promtool and a real scraper
  chromium nodejs  # browser test of the web playground (tests/browser: playwright-core via npm)
  # deploy/ tested for real (tests/deploy): the Docker engine, compose, a local base image (no
  # registry), linting, nginx's config check
  docker.io docker-compose debootstrap yamllint nginx-light
)
$build_only && packages=("${build_packages[@]}")
# Debian's nodejs comes without npm; NodeSource's nodejs (as on some CI images) brings its own,
# and Debian's npm would conflict with it.
$build_only || command -v npm >/dev/null 2>&1 || packages+=(npm)

# The ONNX Runtime C/C++ SDK is no Debian package: fetched (pinned, checksum verified) from NuGet
# into third_party/onnxruntime/ unless ONNXRUNTIME_ROOT names one (see the script), or unless
# VOXSERVE_ONNX=OFF (make ONNX=OFF: an espeak-ng-only build).
[ "${VOXSERVE_ONNX:-ON}" = OFF ] || "$(dirname "$0")/fetch-onnxruntime.sh"

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
