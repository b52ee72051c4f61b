#!/usr/bin/env bash
# REST vs gRPC, and streaming protocols (issue 5): the same corpus (bench/corpus/mixed.txt, pcm)
# over REST (whole file) and gRPC (unary Synthesize) at concurrency 10, 50 and 100: throughput and
# P50/P99 latency; then time to first audio over HTTP chunked, SSE, WebSocket and gRPC
# SynthesizeStream at the same points. Closed loop, voxbench retries off (every error counts).
# The server's queue_capacity is raised (bench config below) so that 100 clients queue instead
# of being refused with 429: the comparison is about the transports, not admission control.
# Prints one markdown table (voxbench's own per-run tables go to stderr).
# Usage: bench/protocols_bench.sh [build-dir] [seconds-per-point] [warm-up seconds]
set -euo pipefail
build=${1:-build}
seconds=${2:-8}
warmup=${3:-2}
levels=${LEVELS:-10,50,100}
here=$(cd "$(dirname "$0")" && pwd)
for tool in voxserve voxbench; do
  [ -x "$build/bin/$tool" ] || { echo "missing $build/bin/$tool: build first" >&2; exit 1; }
done
work=$(mktemp -d)
log="$work/voxserve.log"
# One espeak instance as the default config has; 4096 queued sentences hold 100 clients' worth
# (each request queues at most service.pipeline_depth = 2 segments at once).
cat > "$work/bench.yaml" <<'YAML'
models:
  - id: espeak
    engine: espeak
    default_voice: en-us
    scheduling: {instances: 1, max_batch_size: 1, max_queue_delay_ms: 0, queue_capacity: 4096}
    warmup: ["Hello."]
YAML
"$build/bin/voxserve" --config "$work/bench.yaml" --host 127.0.0.1 --port 0 --grpc-port 0 2>"$log" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
port="" grpc_port=""
for _ in $(seq 300); do
  port=$(grep -o 'listening on http://[0-9.]*:[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  grpc_port=$(grep -o 'gRPC listening on [0-9.]*:[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  [ -n "$port" ] && [ -n "$grpc_port" ] && curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null && break
  sleep 0.1
done
[ -n "$port" ] && [ -n "$grpc_port" ] || { cat "$log" >&2; exit 1; }
rest="http://127.0.0.1:$port"
ws="ws://127.0.0.1:$port"
grpc="grpc://127.0.0.1:$grpc_port"

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/{print $2}') GiB; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ); closed loop c=$levels, ${seconds}s per point after ${warmup}s warm-up; server and voxbench share the machine"
runs=()
bench() {  # name, then voxbench flags
  local name=$1; shift
  runs+=("$name")
  echo "== $name" >&2
  "$build/bin/voxbench" -c "$levels" -d "$seconds" --warmup "$warmup" \
    --corpus "$here/corpus/mixed.txt" -f pcm --timeout 120 --json "$work/$name.json" "$@" >&2
}
bench "REST (whole file)" --url "$rest"
bench "gRPC (unary)" --url "$grpc" --protocol grpc
bench "HTTP chunked" --url "$rest" --stream
bench "SSE" --url "$rest" --protocol sse
bench "WebSocket" --url "$ws" --protocol websocket
bench "gRPC stream" --url "$grpc" --protocol grpc --stream

python3 - "$work" "${runs[@]}" <<'PY'
import json, sys
work, runs = sys.argv[1], sys.argv[2:]
print()
print("| protocol | c | ok/s | P50 ms | P99 ms | first audio P50 ms | first audio P99 ms | RTF P50 | errors |")
print("|---|---|---|---|---|---|---|---|---|")
for name in runs:
    report = json.load(open(f"{work}/{name}.json"))
    for i, p in enumerate(report["points"]):
        errors = ", ".join(f"{n} × {k}" for k, n in sorted(p["errors"].items())) or "–"
        print(f"| {name if i == 0 else ''} | {p['concurrency']:g} | {p['qps']:.1f} "
              f"| {p['latency_ms']['p50']:.0f} | {p['latency_ms']['p99']:.0f} "
              f"| {p['ttfa_ms']['p50']:.0f} | {p['ttfa_ms']['p99']:.0f} "
              f"| {p['rtf']['p50']:.3f} | {errors} |")
PY
