#!/usr/bin/env bash
# voxbench sweeps (issue 7): closed-loop concurrency 1,4,16,64 over REST (whole file), REST
# streamed (chunked), SSE and gRPC, texts from bench/corpus/mixed.txt, pcm so the RTF is known.
# Then two cross-checks against wrk: one synthesis point (same sentence, same concurrency) and
# /health/live, which shows how much more load voxbench can drive than synthesis absorbs.
# Writes bench/voxbench-sweep.{json,csv} (all points) and bench/voxbench-sweep.png.
# Usage: bench/voxbench_sweep.sh [build-dir] [seconds-per-point]
set -euo pipefail
build=${1:-build}
seconds=${2:-10}
here=$(cd "$(dirname "$0")" && pwd)
for tool in voxserve voxbench; do
  [ -x "$build/bin/$tool" ] || { echo "missing $build/bin/$tool: build first" >&2; exit 1; }
done
command -v wrk >/dev/null || { echo "wrk missing: scripts/install-deps.sh" >&2; exit 1; }
work=$(mktemp -d)
log="$work/voxserve.log"
"$build/bin/voxserve" --host 127.0.0.1 --port 0 --grpc-port 0 2>"$log" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 300); do
  port=$(grep -o 'listening on http://[0-9.]*:[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  grpc_port=$(grep -o 'gRPC listening on [0-9.]*:[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  [ -n "$port" ] && [ -n "$grpc_port" ] && curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null && break
  sleep 0.1
done
[ -n "$port" ] || { cat "$log" >&2; exit 1; }
rest="http://127.0.0.1:$port"
grpc="grpc://127.0.0.1:$grpc_port"

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/{print $2}') GiB"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ); ${seconds}s per point, 2s warm-up; server and voxbench share the machine"
bench() {  # name, then voxbench flags
  local name=$1; shift
  echo; echo "== $name =="
  "$build/bin/voxbench" -c 1,4,16,64 -d "$seconds" --warmup 2 --corpus "$here/corpus/mixed.txt" \
    -f pcm --json "$work/$name.json" --csv "$work/$name.csv" "$@"
}
bench rest --url "$rest"
bench rest-stream --url "$rest" --stream
bench sse --url "$rest" --protocol sse
bench grpc --url "$grpc" --protocol grpc --stream

python3 - "$work" "$here" <<'PY'
import csv, json, sys
work, here = sys.argv[1], sys.argv[2]
runs = ["rest", "rest-stream", "sse", "grpc"]
combined = {"runs": {name: json.load(open(f"{work}/{name}.json")) for name in runs}}
json.dump(combined, open(f"{here}/voxbench-sweep.json", "w"), indent=2)
with open(f"{here}/voxbench-sweep.csv", "w") as out:
    rows = []
    for name in runs:
        for row in csv.DictReader(open(f"{work}/{name}.csv")):
            rows.append({"run": name, **row})
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
PY

gnuplot <<GP
set terminal pngcairo size 1200,480 font 'DejaVu Sans,10'
set output '$here/voxbench-sweep.png'
set datafile separator ','
set grid
set key top left
set logscale x 2
set xlabel 'concurrency (closed loop, clients)'
set multiplot layout 1,2 title "voxbench over voxserve (espeak-ng), mixed English/Chinese corpus, pcm"
set ylabel 'requests/s'
set yrange [0:*]
plot for [r in "rest rest-stream sse grpc"] '$work/'.r.'.csv' using 2:7 skip 1 with linespoints lw 2 title r
set ylabel 'milliseconds (log)'
set logscale y 10
set yrange [*:*]
plot for [r in "rest rest-stream sse grpc"] '$work/'.r.'.csv' using 2:11 skip 1 with linespoints lw 2 title r.' P99', \
     for [r in "rest grpc"] '$work/'.r.'.csv' using 2:8 skip 1 with linespoints dt 2 title r.' P50', \
     '$work/rest-stream.csv' using 2:14 skip 1 with linespoints dt 3 lw 2 title 'rest-stream first audio P50'
unset multiplot
GP
echo; echo "wrote $here/voxbench-sweep.png, .json, .csv"

echo; echo "== cross-check with wrk: one sentence, wav, concurrency 16, ${seconds}s =="
sentence="The quick brown fox jumps over the lazy dog."
"$build/bin/voxbench" --url "$rest" -c 16 -d "$seconds" --warmup 2 --text "$sentence" -f wav \
  | sed 's/^/voxbench: /'
wrk -t2 -c16 -d"${seconds}s" --timeout 30s -s "$here/speech.lua" "$rest/v1/audio/speech" \
  | grep '^RESULT' | sed 's/^/wrk:      /'

echo; echo "== the load generator's own ceiling: GET /health/live, concurrency 16 =="
"$build/bin/voxbench" --url "$rest" --call health -c 16 -d "$seconds" --warmup 1 --text x \
  | sed 's/^/voxbench: /'
cat > "$work/live.lua" <<'LUA'
function done(summary, latency, requests)
  io.write(string.format("RESULT rps=%.1f p50_ms=%.2f p99_ms=%.2f errors=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, summary.errors.status + summary.errors.connect +
    summary.errors.read + summary.errors.write + summary.errors.timeout))
end
LUA
wrk -t2 -c16 -d"${seconds}s" -s "$work/live.lua" "$rest/health/live" | grep '^RESULT' | sed 's/^/wrk:      /'
