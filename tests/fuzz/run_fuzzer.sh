#!/usr/bin/env bash
# run_fuzzer.sh FUZZER SEEDS WORKDIR SECONDS: replays every seed (and past crash) in SEEDS, then
# fuzzes SECONDS (or $FUZZ_SECONDS) more, keeping what it learns in WORKDIR/corpus (outside the clone) and any crash
# in WORKDIR/crash-*. Fails on a crash, a leak, a timeout or an out-of-memory input.
set -euo pipefail
fuzzer=$1 seeds=$2 work=$3 seconds=$4
mkdir -p "$work/corpus"
# rss_limit_mb: the parsers bound what they read, so an input needing more than this is a bug.
# timeout: any single input taking over 10 s is a hang.
exec "$fuzzer" -max_total_time="${FUZZ_SECONDS:-$seconds}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$work/" "$work/corpus" "$seeds"
