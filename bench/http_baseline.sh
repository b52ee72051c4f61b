#!/usr/bin/env bash
# HTTP serving baseline: requests/s and P50/P99 latency for a one-sentence request at
# concurrency 1, 8 and 64 (wrk), beside espeak-ng's in-process cost for the same sentence.
# Usage: bench/http_baseline.sh [build-dir] [seconds-per-point]
set -euo pipefail
build=${1:-build}
seconds=${2:-10}
here=$(cd "$(dirname "$0")" && pwd)
bin="$build/bin/voxserve"
for tool in "$bin" "$build/bin/engine_bench"; do
  [ -x "$tool" ] || { echo "missing $tool: build first (make build)" >&2; exit 1; }
done

source "$here/start_server.sh"
start_server

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo "== in-process (no serving): espeak-ng synthesis, then synthesis + encoding per format =="
echo "   (BM_EspeakSynthesizeAndEncode/N: 4 = wav, 5 = pcm, 0 = mp3, 1 = opus)"
"$build/bin/engine_bench" --benchmark_min_time=2 2>/dev/null | grep -E '^BM_'
echo
echo "== HTTP POST /v1/audio/speech (wav), ${seconds}s per point =="
for c in 1 8 64; do
  threads=$(( c < $(nproc) ? c : $(nproc) ))
  result=$(wrk -t"$threads" -c"$c" -d"${seconds}s" --timeout 30s -s "$here/speech.lua" \
    "http://127.0.0.1:$port/v1/audio/speech" | grep '^RESULT')
  echo "concurrency $c: ${result#RESULT }"
done
