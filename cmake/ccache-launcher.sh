#!/usr/bin/env bash
# The compiler launcher (cmake/CompilerCache.cmake): ccache, set up so that a clone at another
# path hits the entries an earlier clone left, clang's precompiled headers included.
#
# ccache's base_dir makes most absolute paths relative, but not two kinds that reach clang:
# `-option=<path>` (`-fsanitize-coverage-ignorelist=`) and paths behind `-Xclang` (CMake's clang
# PCH arguments `-Xclang -include-pch -Xclang <tree>/.../cmake_pch.hxx.pch`). This script makes
# them relative (the compiler runs in the build tree). One exception: the compile that *emits* a
# clang PCH keeps its absolute paths, so a new clone builds its own PCH. Clang records the paths
# of the files a PCH was built from and refuses a PCH whose files are gone, so a PCH restored
# from another clone's entry would break every later compile that misses. Its users would then
# miss too, because ccache hashes the PCH's bytes, which hold those paths; so next to each PCH
# this script writes `<pch>.sum` (ccache's pch_external_checksum): a hash of what the PCH is made
# of (the relative arguments, the compiler, the content of every header it read) and not of
# where. A PCH's users hash that instead of its bytes and hit in any clone.
#
# usage: ccache-launcher.sh <ccache> <base_dir> <compiler> <argument>...
set -euo pipefail
ccache=$1 base=$2
shift 2

# From the build tree up to base_dir, when the build tree lies under it.
ups=
if [[ $PWD == "$base"/* ]]; then
  IFS=/ read -ra below <<<"${PWD#"$base"/}"
  for _ in "${below[@]}"; do ups+=../; done
fi

# Sets REPLY to $1 with the build tree and base_dir, wherever they occur in it, written relative
# to the build tree (no subshell: it runs for every argument of a PCH's compile).
relativize() {
  REPLY=${1//"$PWD"\//}
  [[ $REPLY == *"$PWD" ]] && REPLY=${REPLY%"$PWD"}.
  if [[ -n $ups ]]; then
    REPLY=${REPLY//"$base"\//$ups}
    [[ $REPLY == *"$base" ]] && REPLY=${REPLY%"$base"}${ups%/}
  fi
  return 0
}

emits_pch=false pch= depfile=
previous=
for arg in "$@"; do
  case $previous:$arg in
    -Xclang:-emit-pch) emits_pch=true ;;
    -o:*) pch=$arg ;;
    -MF:*) depfile=$arg ;;
  esac
  previous=$arg
done

args=()
previous=
for arg in "$@"; do
  if [[ $previous == -Xclang && $arg == /* ]] && ! $emits_pch || [[ $arg == -*=/* ]]; then
    relativize "$arg"
    arg=$REPLY
  fi
  args+=("$arg")
  previous=$arg
done

export CCACHE_BASEDIR=$base
export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
export CCACHE_NOHASHDIR=1
export CCACHE_PCH_EXTSUM=1
if ! $emits_pch; then
  exec "$ccache" "${args[@]}"
fi

# A clang PCH: compile it, then write what its users hash. Should that fail (a depfile this
# script cannot read), the PCH goes without: its users then hash its bytes, as ccache does alone.
rm -f "$pch.sum"
"$ccache" "${args[@]}"
pch_sum() {
  for arg in "${args[@]}"; do
    relativize "$arg"
    printf '%s\n' "$REPLY"
  done
  stat -L -c '%s %Y' "$(command -v "${args[0]}")"
  sed -e '1s/^[^:]*://' -e 's/\\$//' "$depfile" | tr -s ' \t' '\n\n' | sed '/^$/d' |
    xargs -r sha256sum | cut -d' ' -f1
}
if [[ -n $depfile ]] && sum=$(pch_sum | sha256sum); then
  printf '%s\n' "${sum%% *}" >"$pch.sum.tmp" && mv "$pch.sum.tmp" "$pch.sum"
fi
