#!/usr/bin/env bash
# Scheduler and streaming figures (issue 3), against a real voxserve on this machine:
#  (a) time to first audio of a streamed 10-sentence text vs. the latency of its first sentence alone
#  (b) closed-loop throughput and P50/P95/P99 latency at concurrency 1, 4, 16, 64
#  (c) overload: open-loop arrivals at ~10x the measured capacity: fraction rejected (429),
#      latency of the accepted requests, peak RSS of the server
# Usage: bench/scheduler_bench.sh [build-dir] [seconds-per-point] [extra voxserve flags...]
set -euo pipefail
build=${1:-build}
seconds=${2:-10}
shift $(( $# > 2 ? 2 : $# ))
here=$(cd "$(dirname "$0")" && pwd)
bin="$build/bin/voxserve"
py=/usr/bin/python3
[ -x "$bin" ] || { echo "missing $bin: build first (make build)" >&2; exit 1; }

source "$here/start_server.sh"
start_server "$@"

first="The quick brown fox jumps over the lazy dog."
ten="$first"
for i in 2 3 4 5 6 7 8 9 10; do ten="$ten Sentence number $i follows the first one closely."; done
load() { "$py" "$here/load.py" --port "$port" "$@"; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); date: $(date -u +%Y-%m-%d)"
echo
echo "== (a) time to first audio, wav, one client =="
echo "first sentence alone, not streamed:  $(load -c 1 -d "$seconds" --text "$first")"
echo "10 sentences, stream_format=audio:   $(load -c 1 -d "$seconds" --text "$ten" --stream)"
echo "10 sentences, not streamed:          $(load -c 1 -d "$seconds" --text "$ten")"
echo
echo "== (b) one sentence, wav, closed loop =="
for c in 1 4 16 64; do echo "concurrency $c: $(load -c "$c" -d "$seconds" --text "$first")"; done
echo
echo "== (c) overload: 10-sentence requests, open loop =="
capacity=$(load -c 16 -d "$seconds" --text "$ten" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["ok_per_s"])')
rate=$("$py" -c "print(round(10 * $capacity, 1))")
echo "measured capacity: $capacity requests/s; offered: $rate requests/s"
echo "result: $(load --rate "$rate" -d "$seconds" --text "$ten")"
echo "server peak RSS: $(grep VmHWM /proc/$server/status | awk '{print $2, $3}')"
