#!/usr/bin/env bash
# Serving cost, split by process (issue 11): CPU per request of the voxserve server process and,
# separately, of its worker processes, for the one-sentence WAV request under wrk. CPU time per
# request is what to compare on a shared machine (throughput swings with other load; this much
# less), best as interleaved A/B runs of two binaries. Optional perf: pass perf-record options
# as the 6th argument (e.g. "-g") and the profiles land in ./serving-cpu-{server,worker}.data.
# Usage: bench/serving_cpu.sh [build-dir] [isolation: thread|process] [instances] [c] [seconds] [perf-opts]
set -euo pipefail
build=${1:-build}; isolation=${2:-process}; instances=${3:-1}; c=${4:-8}; seconds=${5:-4}
perf_opts=${6:-}
here=$(cd "$(dirname "$0")" && pwd)
bin="$build/bin/voxserve"
[ -x "$bin" ] || { echo "missing $bin: build first (make build)" >&2; exit 1; }
work=$(mktemp -d)
cat >"$work/c.yaml" <<YAML
models:
  - id: espeak
    engine: espeak
    scheduling: {isolation: $isolation, instances: $instances, queue_capacity: 1024}
YAML
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" --host 127.0.0.1 --port "$port" --grpc-enabled false --log-level warn \
  --config "$work/c.yaml" 2>"$work/log" &
server=$!
trap 'kill $server 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 300); do curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null && break; sleep 0.1; done
url="http://127.0.0.1:$port/v1/audio/speech"
workers=$(pgrep -P "$server" | tr '\n' ' ' || true)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # utime + stime, all threads
sum_ticks() { local t=0; for p in "$@"; do t=$((t + $(ticks "$p"))); done; echo $t; }
wrk -t1 -c"$c" -d1s -s "$here/speech.lua" "$url" >/dev/null  # warm-up
s0=$(ticks $server); w0=$(sum_ticks $workers)
if [ -n "$perf_opts" ]; then
  perf record -e cpu-clock $perf_opts -o serving-cpu-server.data -p "$server" -- sleep "$seconds" \
    >/dev/null 2>&1 &
  [ -n "$workers" ] && perf record -e cpu-clock $perf_opts -o serving-cpu-worker.data \
    -p "$(tr ' ' ',' <<<"${workers% }")" -- sleep "$seconds" >/dev/null 2>&1 &
fi
out=$(wrk -t$((c < 2 ? c : 2)) -c"$c" -d"${seconds}s" -s "$here/speech.lua" "$url")
s1=$(ticks $server); w1=$(sum_ticks $workers)
wait_perf=$(jobs -p | grep -v "^$server$" || true); for p in $wait_perf; do wait "$p" || true; done
requests=$(grep -o '[0-9]* requests in' <<<"$out" | cut -d' ' -f1)
awk -v s=$((s1 - s0)) -v w=$((w1 - w0)) -v n="$requests" -v hz="$(getconf CLK_TCK)" \
    -v line="$(grep RESULT <<<"$out")" \
  'BEGIN { printf "%s requests=%d server_ms/req=%.3f workers_ms/req=%.3f total_ms/req=%.3f\n",
           line, n, s * 1000 / hz / n, w * 1000 / hz / n, (s + w) * 1000 / hz / n }'
