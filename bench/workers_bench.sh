#!/usr/bin/env bash
# Worker processes (issue 11): one-sentence WAV requests/s at concurrency 1, 8 and 64 for voxserve
# in-process (1 thread: the old default), 1 and 2 worker processes, beside a FastAPI + uvicorn
# peer (bench/fastapi_peer.py, espeak-ng through ctypes) with 1 and 2 workers. Every server runs
# the whole time; points are interleaved (each concurrency runs every target in turn) so a
# change in machine load hits them all alike. Prints ratios and the server's CPU time per
# request (process tree: server + workers) beside espeak-ng's in-process cost.
# Usage: bench/workers_bench.sh [build-dir] [seconds-per-point]
set -euo pipefail
build=${1:-build}
seconds=${2:-6}
here=$(cd "$(dirname "$0")" && pwd)
bin="$build/bin/voxserve"
[ -x "$bin" ] || { echo "missing $bin: build first (make build)" >&2; exit 1; }
command -v wrk >/dev/null || { echo "missing wrk (scripts/install-deps.sh)" >&2; exit 1; }
/usr/bin/python3 -c "import fastapi, uvicorn" 2>/dev/null ||
  { echo "missing python3-fastapi / python3-uvicorn (scripts/install-deps.sh)" >&2; exit 1; }

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
declare -A port pid_of

wait_ready() {  # name url
  for _ in $(seq 600); do
    curl -sf "$2/health/ready" >/dev/null && return 0
    sleep 0.1
  done
  echo "$1 did not become ready" >&2
  cat "$work/$1.log" >&2
  exit 1
}

start_voxserve() {  # name isolation instances
  cat >"$work/$1.yaml" <<YAML
models:
  - id: espeak
    engine: espeak
    scheduling: {isolation: $2, instances: $3, queue_capacity: 1024}
YAML
  "$bin" --host 127.0.0.1 --port 0 --grpc-enabled false --log-level warn \
    --config "$work/$1.yaml" 2>"$work/$1.log" &
  pids+=($!)
  pid_of[$1]=$!
  # warn level hides the "listening" line: ask the kernel which port the process holds.
  for _ in $(seq 300); do
    port[$1]=$(ss -ltnpH 2>/dev/null | grep "pid=${pid_of[$1]}," | grep -o '127.0.0.1:[0-9]*' |
               head -1 | cut -d: -f2 || true)
    [ -n "${port[$1]}" ] && break
    sleep 0.1
  done
  wait_ready "$1" "http://127.0.0.1:${port[$1]}"
}

start_peer() {  # name workers
  port[$1]=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  /usr/bin/python3 -m uvicorn --app-dir "$here" fastapi_peer:app --host 127.0.0.1 \
    --port "${port[$1]}" --workers "$2" --log-level warning --no-access-log 2>"$work/$1.log" &
  pids+=($!)
  pid_of[$1]=$!
  wait_ready "$1" "http://127.0.0.1:${port[$1]}"
}

# CPU seconds used so far by a process and all its descendants (workers included).
tree_cpu() {
  /usr/bin/python3 - "$1" <<'PY'
import os, sys
root, ticks = int(sys.argv[1]), os.sysconf("SC_CLK_TCK")
children, cpu = {}, {}
for entry in os.listdir("/proc"):
    if not entry.isdigit():
        continue
    try:
        fields = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        continue
    children.setdefault(int(fields[1]), []).append(int(entry))
    cpu[int(entry)] = (int(fields[11]) + int(fields[12])) / ticks
total, todo = 0.0, [root]
while todo:
    pid = todo.pop()
    total += cpu.get(pid, 0.0)
    todo += children.get(pid, [])
print(f"{total:.3f}")
PY
}

targets=(vox-inproc vox-1w vox-2w peer-1w peer-2w)
start_voxserve vox-inproc thread 1
start_voxserve vox-1w process 1
start_voxserve vox-2w process 2
start_peer peer-1w 1
start_peer peer-2w 2

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "request: POST /v1/audio/speech, one sentence, wav; wrk, ${seconds}s per point"
echo
declare -A rps p50
printf '%-4s %-11s %9s %9s %9s %7s %13s\n' c target req/s p50_ms p99_ms errors cpu_ms/req
for c in 1 8 64; do
  threads=$(( c < $(nproc) ? c : $(nproc) ))
  for target in "${targets[@]}"; do
    before=$(tree_cpu "${pid_of[$target]}")
    line=$(wrk -t"$threads" -c"$c" -d"${seconds}s" --timeout 30s -s "$here/speech.lua" \
      "http://127.0.0.1:${port[$target]}/v1/audio/speech" | grep '^RESULT')
    after=$(tree_cpu "${pid_of[$target]}")
    r=$(grep -o 'rps=[0-9.]*' <<<"$line" | cut -d= -f2)
    rps[$target,$c]=$r
    p50[$target,$c]=$(grep -o 'p50_ms=[0-9.]*' <<<"$line" | cut -d= -f2)
    p99=$(grep -o 'p99_ms=[0-9.]*' <<<"$line" | cut -d= -f2)
    errors=$(grep -o 'errors=[0-9]*' <<<"$line" | cut -d= -f2)
    cpu=$(awk -v a="$before" -v b="$after" -v r="$r" -v s="$seconds" \
      'BEGIN { n = r * s; printf "%.2f", (n > 0 ? (b - a) * 1000 / n : 0) }')
    printf '%-4s %-11s %9s %9s %9s %7s %13s\n' "$c" "$target" "$r" "${p50[$target,$c]}" "$p99" \
      "$errors" "$cpu"
  done
done
echo
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", (b > 0 ? a / b : 0) }'; }
for c in 8 64; do
  echo "c=$c: vox-2w / peer-2w = $(ratio "${rps[vox-2w,$c]}" "${rps[peer-2w,$c]}")" \
       "(target >= 1.3x); vox-2w / vox-1w = $(ratio "${rps[vox-2w,$c]}" "${rps[vox-1w,$c]}")" \
       "(target >= 1.6x); vox-2w / vox-inproc = $(ratio "${rps[vox-2w,$c]}" "${rps[vox-inproc,$c]}")"
done
awk -v w="${p50[vox-2w,1]}" -v t="${p50[vox-inproc,1]}" \
  'BEGIN { printf "c=1: p50 vox-2w %.2f ms vs in-process %.2f ms: %+.2f ms (target <= +0.3 ms)\n", w, t, w - t }'
echo "cpu_ms/req is the whole server's (workers included) CPU per request; espeak-ng alone costs"
echo "about 3 ms per sentence in-process (bench/http_baseline.sh, engine_bench): the rest is serving."
