#!/usr/bin/env bash
# ONNX Runtime engine figures (issue 4): a Piper voice of real size (random weights, built by
# bench/onnx/make_vits_graph.py with Debian's python3-torch) and its int8 version
# (bench/onnx/quantize_dynamic.py), served by a real voxserve:
#   latency per sentence, real-time factor, throughput at concurrency 1/4/16,
#   dynamic batching off (max_batch_size 1) and on (8, 10 ms queue delay), fp32 and int8.
# Usage: bench/onnx_bench.sh [build-dir] [seconds-per-point] [quality: medium|high] [cpu arena: off|on|shrink]
# Needs: apt-get install python3-torch python3-onnx (the graphs are built once into $work).
set -euo pipefail
build=${1:-build}
seconds=${2:-15}
quality=${3:-medium}
arena=${4:-shrink}  # ORT's CPU memory arena (option cpu_memory_arena; voxserve's default: shrink)
here=$(cd "$(dirname "$0")" && pwd)
bin="$build/bin/voxserve"
py=/usr/bin/python3
work=${VOXSERVE_BENCH_DIR:-/tmp/voxserve-onnx-bench}
[ -x "$bin" ] || { echo "missing $bin: build first (make build)" >&2; exit 1; }
"$py" -c 'import torch, onnx' 2>/dev/null || {
  echo "needs Debian's python3-torch and python3-onnx: apt-get install python3-torch python3-onnx" >&2
  exit 1
}

mkdir -p "$work"
model="$work/vits-$quality.onnx"
if [ ! -f "$model" ]; then
  "$py" "$here/onnx/make_vits_graph.py" --out "$work" --quality "$quality" 2>/dev/null
fi
if [ ! -f "$work/vits-$quality.int8.onnx" ]; then
  "$py" "$here/onnx/quantize_dynamic.py" "$model" "$work/vits-$quality.int8.onnx"
  cp "$model.json" "$work/vits-$quality.int8.onnx.json"
fi

threads=$(nproc)
config="$work/bench.yaml"
{
  echo "models:"
  echo "  - {id: espeak, engine: espeak}"
  for variant in fp32 int8; do
    file="$model"
    [ "$variant" = int8 ] && file="$work/vits-$quality.int8.onnx"
    for batching in off on; do
      batch=1 delay=0
      [ "$batching" = on ] && batch=8 delay=10
      echo "  - id: vits-$variant-batch-$batching"
      echo "    engine: piper"
      echo "    options: {model: $file, max_batch_size: $batch, intra_op_threads: $threads, cpu_memory_arena: $arena}"
      echo "    scheduling: {instances: 1, max_batch_size: $batch, max_queue_delay_ms: $delay, queue_capacity: 256}"
    done
  done
} >"$config"

source "$here/start_server.sh"
start_server --config "$config"

sentence="The quick brown fox jumps over the lazy dog."
audio_seconds=$(curl -sf "http://127.0.0.1:$port/v1/audio/speech" -H 'Content-Type: application/json' \
  -d "{\"model\":\"vits-fp32-batch-off\",\"input\":\"$sentence\",\"voice\":\"vits-fp32-batch-off\",\"response_format\":\"wav\"}" |
  "$py" -c 'import io,sys,wave; w=wave.open(io.BytesIO(sys.stdin.buffer.read())); print(w.getnframes()/w.getframerate())')

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); date: $(date -u +%Y-%m-%d)"
echo "cpu_memory_arena: $arena; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "graph: $(basename "$model") ($(du -m "$model" | cut -f1) MB) and int8 ($(du -m "$work/vits-$quality.int8.onnx" | cut -f1) MB); sentence: \"$sentence\" = ${audio_seconds} s of audio"
echo
# CPU time the server spent (user + system, all threads), in seconds: a cost per sentence that
# other load on the machine disturbs far less than wall-clock figures.
cpu_seconds() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$server/stat"; }

echo "| model | batching | concurrency | sentences/s | audio s/s | P50 ms | P95 ms | RTF (P50 / audio) | server CPU s per sentence |"
echo "|---|---|---|---|---|---|---|---|---|"
for variant in fp32 int8; do
  for batching in off on; do
    id="vits-$variant-batch-$batching"
    for c in 1 4 16; do
      cpu_before=$(cpu_seconds)
      result=$("$py" "$here/load.py" --port "$port" -c "$c" -d "$seconds" --voice "$id" --text "$sentence")
      cpu_used=$("$py" -c "print($(cpu_seconds) - $cpu_before)")
      echo "$result" | "$py" -c "
import json, sys
r = json.load(sys.stdin)
audio = $audio_seconds
p50, p95 = r['latency_ms']['p50'], r['latency_ms']['p95']
errors = r['requests'] - r['ok']
print(f\"| $variant | $batching | $c | {r['ok_per_s']} | {r['ok_per_s'] * audio:.2f} | {p50} | {p95} | {p50 / 1000 / audio:.3f} | {$cpu_used / max(1, r['ok']):.3f} |\"
      + (f' ({errors} errors)' if errors else ''))"
    done
  done
done
echo
echo "batch sizes formed (sum / count of voxserve_batch_size):"
curl -s "http://127.0.0.1:$port/metrics" | grep -E '^voxserve_batch_size_(sum|count)\{model="vits' || true
