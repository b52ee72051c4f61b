#!/usr/bin/env bash
# espeak-ng serving (issues 11, 38): one-sentence WAV requests/s at concurrency 1, 8 and 64 for
# voxserve's default (in-process instances, one per core, each speaking through its own espeak
# speaker processes), 1 and 2 worker processes, beside a FastAPI + uvicorn peer
# (bench/fastapi_peer.py, espeak-ng through ctypes) with 1 and 2 workers. Every server runs the
# whole time; points are interleaved (each concurrency runs every target in turn) so a change in
# machine load hits them all alike. Prints ratios, the server's CPU time per request (process
# tree: server, workers, espeak's template and speakers) and the part of it that is not the
# speakers' (serving: HTTP, JSON, scheduling, encoding, the hops).
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

start_voxserve() {  # name isolation instances (auto: one per core)
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

# CPU seconds used so far by a process and all its descendants (workers included), and by the
# espeak speakers among them (a voxserve-espeak-template whose parent is one too).
tree_cpu() {
  /usr/bin/python3 - "$1" <<'PY'
import os, sys
root, ticks = int(sys.argv[1]), os.sysconf("SC_CLK_TCK")
children, cpu, parent, template = {}, {}, {}, set()
for entry in os.listdir("/proc"):
    if not entry.isdigit():
        continue
    try:
        fields = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
        if open(f"/proc/{entry}/cmdline", "rb").read().startswith(b"voxserve-espeak-template"):
            template.add(int(entry))
    except OSError:
        continue
    children.setdefault(int(fields[1]), []).append(int(entry))
    parent[int(entry)] = int(fields[1])
    cpu[int(entry)] = (int(fields[11]) + int(fields[12])) / ticks
total, speakers, todo = 0.0, 0.0, [root]
while todo:
    pid = todo.pop()
    total += cpu.get(pid, 0.0)
    if pid in template and parent.get(pid) in template:
        speakers += cpu.get(pid, 0.0)
    todo += children.get(pid, [])
print(f"{total:.3f} {speakers:.3f}")
PY
}

targets=(vox-default vox-1w vox-2w peer-1w peer-2w)
start_voxserve vox-default thread auto
start_voxserve vox-1w process 1
start_voxserve vox-2w process 2
start_peer peer-1w 1
start_peer peer-2w 2

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "request: POST /v1/audio/speech, one sentence, wav; wrk, ${seconds}s per point"
echo
declare -A rps p50
printf '%-4s %-11s %9s %9s %9s %7s %11s %13s\n' c target req/s p50_ms p99_ms errors cpu_ms/req \
  serving_ms/req
for c in 1 8 64; do
  threads=$(( c < $(nproc) ? c : $(nproc) ))
  for target in "${targets[@]}"; do
    read -r before before_speakers < <(tree_cpu "${pid_of[$target]}")
    line=$(wrk -t"$threads" -c"$c" -d"${seconds}s" --timeout 30s -s "$here/speech.lua" \
      "http://127.0.0.1:${port[$target]}/v1/audio/speech" | grep '^RESULT')
    read -r after after_speakers < <(tree_cpu "${pid_of[$target]}")
    r=$(grep -o 'rps=[0-9.]*' <<<"$line" | cut -d= -f2)
    rps[$target,$c]=$r
    p50[$target,$c]=$(grep -o 'p50_ms=[0-9.]*' <<<"$line" | cut -d= -f2)
    p99=$(grep -o 'p99_ms=[0-9.]*' <<<"$line" | cut -d= -f2)
    errors=$(grep -o 'errors=[0-9]*' <<<"$line" | cut -d= -f2)
    cpu=$(awk -v a="$before" -v b="$after" -v r="$r" -v s="$seconds" \
      'BEGIN { n = r * s; printf "%.2f", (n > 0 ? (b - a) * 1000 / n : 0) }')
    # The peer runs espeak-ng inside its workers: no split to show.
    serving=$(awk -v a="$before" -v b="$after" -v sa="$before_speakers" -v sb="$after_speakers" \
      -v r="$r" -v s="$seconds" 'BEGIN { n = r * s; spoken = sb - sa
        if (n <= 0 || spoken <= 0) { print "-"; exit }
        printf "%.2f (%.0f%%)", ((b - a) - spoken) * 1000 / n, ((b - a) - spoken) * 100 / spoken }')
    printf '%-4s %-11s %9s %9s %9s %7s %11s %13s\n' "$c" "$target" "$r" "${p50[$target,$c]}" \
      "$p99" "$errors" "$cpu" "$serving"
  done
done
echo
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", (b > 0 ? a / b : 0) }'; }
for c in 1 8 64; do
  echo "c=$c: vox-default / peer-2w = $(ratio "${rps[vox-default,$c]}" "${rps[peer-2w,$c]}")" \
       "(issue 38 target: >= 1.0x / 1.5x / 1.2x at c=1 / 8 / 64);" \
       "vox-2w / peer-2w = $(ratio "${rps[vox-2w,$c]}" "${rps[peer-2w,$c]}");" \
       "vox-2w / vox-1w = $(ratio "${rps[vox-2w,$c]}" "${rps[vox-1w,$c]}")"
done
echo "c=1 p50: vox-default ${p50[vox-default,1]} ms, peer-2w ${p50[peer-2w,1]} ms" \
     "(target: voxserve <= peer)"
echo "cpu_ms/req is the whole server's CPU per request (workers, espeak's template and speakers"
echo "included); serving_ms/req is that less the speakers' (the % is of the speakers' CPU; issue 38"
echo "target < 10%). espeak-ng alone: build/bin/engine_bench --benchmark_filter=BM_Espeak."
