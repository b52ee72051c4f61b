#!/usr/bin/env bash
# The deployment end-to-end tests (tests/deploy/test_compose_e2e.py, then
# test_compose_postgres_e2e.py: compose.postgres.yaml's shared voice registry, then
# test_export_image_e2e.py: the CosyVoice export image as the Kubernetes Job runs it) with
# everything they need: dockerd (started when it is not running), the base image (debootstrap, no
# registry here), the voxserve image from deploy/docker/Dockerfile, the export image, and local
# stand-ins for the public nginx, Prometheus and PostgreSQL images the compose files name.
#   tests/deploy/run-e2e.sh BUILD_DIR [PYTEST_ARGS...]   (BUILD_DIR holds bin/voxbench; `make
#   test-deploy`); e.g. -k drain runs only the drain tests (the images are built either way)
#   tests/deploy/run-e2e.sh --prepare BUILD_DIR   only what comes from the network and needs no
#   build: dockerd, the base image, the stand-ins, the image's toolchain stage. `make test` runs
#   it in the background while it compiles; a later run waits for it (a lock in BUILD_DIR) and
#   finds it all cached.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
prepare_only=false
[ "${1:-}" = --prepare ] && { prepare_only=true; shift; }
mkdir -p "${1:?usage: run-e2e.sh [--prepare] BUILD_DIR [PYTEST_ARGS...]}"
build=$(cd "$1" && pwd)
shift
here="$root/tests/deploy"

prepare() {
  if ! docker info >/dev/null 2>&1; then
    echo "run-e2e: starting dockerd"
    # Without the lock's fd: the daemon outlives this script and must not hold the lock.
    (dockerd >/var/log/voxserve-dockerd.log 2>&1 9>&- &)
    for _ in $(seq 1 120); do docker info >/dev/null 2>&1 && break; sleep 0.5; done
    docker info >/dev/null || { tail -20 /var/log/voxserve-dockerd.log; exit 1; }
  fi
  export DOCKER_BUILDKIT=0  # the classic builder: Debian's docker.io has no buildx plugin

  "$here/images/base-image.sh" debian:bookworm-slim
  stand_in() {  # TAG DOCKERFILE: builds the stand-in unless an image of that name exists
    docker image inspect "$1" >/dev/null 2>&1 && return 0
    docker build -q --network host -t "$1" -f "$2" "$here/images" >/dev/null
    echo "run-e2e: built stand-in $1"
  }
  stand_in nginx:1.27 "$here/images/nginx.Dockerfile"
  stand_in prom/prometheus:v2.53.0 "$here/images/prometheus.Dockerfile"
  stand_in postgres:15-bookworm "$here/images/postgres.Dockerfile"  # compose.postgres.yaml's
  # The voxserve image's toolchain stage (its Debian packages), which the image build reuses;
  # tagged, so that pruning dangling images keeps it for the next run.
  docker build -q --network host --target toolchain -t voxserve-toolchain:prepared \
    -f "$root/deploy/docker/Dockerfile" "$root" >/dev/null
  # The CosyVoice export image (deploy/docker/export.Dockerfile) from the upstream copy the
  # oracle tests use; without one its test skips.
  if [ -n "${VOXSERVE_COSYVOICE_REF:-}" ] && [ -d "$VOXSERVE_COSYVOICE_REF/../Matcha-TTS" ]; then
    "$root/deploy/docker/build-export-image.sh" --upstream "$VOXSERVE_COSYVOICE_REF/.." \
      voxserve-export:test -q >/dev/null
    echo "run-e2e: built voxserve-export:test"
  fi
}

# One preparation at a time: a run started while the background one is under way waits for it.
start=$(date +%s)
exec 9>"$build/deploy-prepare.lock"
flock 9
prepare
echo "run-e2e: prepared (dockerd, base, stand-ins, toolchain) in $(( $(date +%s) - start )) s"
flock -u 9
$prepare_only && exit 0

# The release build's binaries, packaged by the Dockerfile's build stage (configured there, not
# compiled a second time: VOXSERVE_IMAGE_COMPILE=1 compiles them in the image as users do).
prebuilt=(--prebuilt "$build/bin")
[ "${VOXSERVE_IMAGE_COMPILE:-0}" = 1 ] && prebuilt=()
start=$(date +%s)
"$root/deploy/docker/build-image.sh" "${prebuilt[@]}" voxserve:cpu -q >/dev/null
echo "run-e2e: voxserve:cpu built in $(( $(date +%s) - start )) s;" \
     "$(docker image inspect -f '{{.Size}}' voxserve:cpu | awk '{printf "%.0f MB", $1/1e6}')"
# Intermediate images of earlier builds are what a rebuild reuses; dangling ones only fill disk.
docker image prune -f >/dev/null

VOXBENCH_BIN="$build/bin/voxbench" VOXSERVE_BIN="$build/bin/voxserve" /usr/bin/python3 -m pytest -q -s -p no:cacheprovider \
  "$here/test_compose_e2e.py" "$here/test_compose_postgres_e2e.py" "$here/test_export_image_e2e.py" \
  "$@"
