#!/usr/bin/env bash
# Builds the CosyVoice export image (deploy/docker/export.Dockerfile):
#   deploy/docker/build-export-image.sh [--upstream DIR] [TAG] [docker build arguments...]
# TAG defaults to voxserve-export:latest. Upstream CosyVoice and Matcha-TTS come at the commits
# below (the ones tools/cosyvoice_export is checked against), fetched with git at build time, or
# from DIR (holding CosyVoice/ and Matcha-TTS/ at those commits: the tests pass the project's
# copy in ../shared/oracles). The build stage installs Debian packages with apt, so it runs on
# the host's network.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
COSYVOICE_REPO=https://github.com/FunAudioLLM/CosyVoice.git
COSYVOICE_COMMIT=ace7c47f41bbd303aa6bf1ea80e6f9fbd595cd40
MATCHA_REPO=https://github.com/shivammehta25/Matcha-TTS.git
MATCHA_COMMIT=dd9105b34bf2be2230f4aa1e4769fb586a3c824e
upstream=""
if [ "${1:-}" = --upstream ]; then
  upstream=$(cd "${2:?--upstream needs a folder}" && pwd); shift 2
fi
tag=${1:-voxserve-export:latest}; shift || true
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
mkdir -p "$context/upstream" "$context/tools"
fetch() {  # NAME REPO COMMIT: a shallow fetch of one commit
  git -C "$context/upstream" init -q "$1"
  git -C "$context/upstream/$1" fetch -q --depth 1 "$2" "$3"
  git -C "$context/upstream/$1" checkout -q FETCH_HEAD
  rm -rf "$context/upstream/$1/.git"
}
if [ -n "$upstream" ]; then
  cp -a "$upstream/CosyVoice" "$upstream/Matcha-TTS" "$context/upstream/"
else
  fetch CosyVoice "$COSYVOICE_REPO" "$COSYVOICE_COMMIT"
  fetch Matcha-TTS "$MATCHA_REPO" "$MATCHA_COMMIT"
fi
cp -a "$root/tools/cosyvoice_export" "$context/tools/"
find "$context" -name __pycache__ -prune -exec rm -rf {} +
DOCKER_BUILDKIT=0 docker build --network host -f "$root/deploy/docker/export.Dockerfile" \
  -t "$tag" "$@" "$context"
