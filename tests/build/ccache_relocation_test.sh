#!/usr/bin/env bash
# cmake/ccache-launcher.sh: a clone at another path hits what a first clone left in the compiler
# cache, the files compiled with clang's precompiled headers included; it still compiles once
# the first clone is gone; and an edited header inside a PCH is not served from the cache.
# Skips (77) without ccache or clang-14.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
for tool in ccache clang++-14 cmake ninja; do
  command -v "$tool" >/dev/null || { echo "skipped: no $tool"; exit 77; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CCACHE_DIR=$work/cache

clone() {  # DIR: the tiny project with this checkout's cmake/ files, configured and built
  mkdir -p "$1/cmake"
  cp "$root"/tests/build/pch_project/* "$1/"
  cp "$root"/cmake/{CompilerCache,PrecompiledHeaders}.cmake "$root"/cmake/ccache-launcher.sh \
    "$1/cmake/"
  CXX=clang++-14 cmake -S "$1" -B "$1/build" -G Ninja >/dev/null
  cmake --build "$1/build" >/dev/null
}
ccache_stat() { ccache --print-stats | awk -v key="$1" '$1 == key {print $2}'; }
fail() { echo "FAIL: $*"; exit 1; }

clone "$work/first/project"
[ "$("$work/first/project/build/answer")" = 42 ] || fail "the first clone's program is wrong"

ccache --zero-stats >/dev/null
clone "$work/second/elsewhere/project"
hits=$(( $(ccache_stat direct_cache_hit) + $(ccache_stat preprocessed_cache_hit) ))
misses=$(ccache_stat cache_miss)
echo "second clone: $hits hits, $misses misses"
[ "$hits" = 2 ] || fail "expected both files compiled with the PCH to hit, got $hits hits"
[ "$misses" = 1 ] || fail "expected the PCH alone to compile again, got $misses misses"

rm -rf "$work/first"
second="$work/second/elsewhere/project"
echo "// edited" >>"$second/main.cc"
cmake --build "$second/build" >/dev/null || fail "a miss after the first clone was removed"
sed -i 's/kAnswer = 42/kAnswer = 43/' "$second/answer.h"
cmake --build "$second/build" >/dev/null
[ "$("$second/build/answer")" = 43 ] || fail "an edited header in the PCH was served stale"
echo "ok"
