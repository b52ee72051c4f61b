#!/usr/bin/env bash
# Makes debian:bookworm-slim locally (no registry is reachable here): debootstrap's minbase
# variant of bookworm, imported under the public image's tag, so the Dockerfiles build unchanged.
# The root filesystem is cached under ${VOXSERVE_ROOTFS_CACHE:-/var/tmp/voxserve-rootfs}.
set -euo pipefail
tag=${1:-debian:bookworm-slim}
docker image inspect "$tag" >/dev/null 2>&1 && exit 0
cache=${VOXSERVE_ROOTFS_CACHE:-/var/tmp/voxserve-rootfs}
if [ ! -f "$cache/bookworm/etc/debian_version" ]; then
  rm -rf "$cache/bookworm.partial"
  mkdir -p "$cache"
  debootstrap --variant=minbase bookworm "$cache/bookworm.partial" http://deb.debian.org/debian
  # What the public slim image also leaves out: apt lists, docs, man pages.
  rm -rf "$cache/bookworm.partial"/var/lib/apt/lists/* "$cache/bookworm.partial"/usr/share/doc/* \
         "$cache/bookworm.partial"/usr/share/man/* "$cache/bookworm.partial"/var/cache/apt/*.bin
  mv "$cache/bookworm.partial" "$cache/bookworm"
fi
tar -C "$cache/bookworm" -c . | docker import - "$tag" >/dev/null
echo "base-image: $tag imported from $cache/bookworm"
