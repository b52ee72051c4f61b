#!/usr/bin/env bash
# Runs make targets one by one and prints how long each took, also when one fails (then it stops
# there with that target's exit status). `make test` runs its phases through this.
set -uo pipefail
make_cmd=${MAKE:-make}
declare -A seconds
ran=()
failed=""
report() {
  echo
  echo "make test phases (seconds):"
  local total=0
  for phase in "${ran[@]}"; do
    printf '  %-14s %6d\n' "$phase" "${seconds[$phase]}"
    total=$((total + seconds[$phase]))
  done
  printf '  %-14s %6d\n' total "$total"
  echo "  disk free: $(free_disk) (at the start: $disk_at_start)"
  command -v ccache >/dev/null && ccache --show-stats 2>/dev/null | grep -Ei 'hits|misses' | head -3
  [ -z "$failed" ] || echo "FAILED in phase $failed"
}
trap report EXIT
# A full disk fails a compile with "No space left on device" deep in a log; the free space at the
# start and the end says so at once.
free_disk() { df -h --output=avail . 2>/dev/null | tail -1 | tr -d ' '; }
disk_at_start=$(free_disk)

for phase in "$@"; do
  start=$SECONDS
  $make_cmd --no-print-directory "$phase"
  status=$?
  seconds[$phase]=$((SECONDS - start))
  ran+=("$phase")
  if [ $status -ne 0 ]; then
    failed=$phase
    exit $status
  fi
done
