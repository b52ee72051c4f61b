#!/usr/bin/env bash
# Container and proxy overhead (issue 14): the same one-sentence WAV load (voxbench, closed loop)
# against voxserve on the host, the image with host networking, and the compose project through
# nginx, interleaved round by round so a change in machine load hits all three alike. Prints
# requests/s and latency per target and the ratios to the host. Needs the images
# (tests/deploy/run-e2e.sh builds them) and a release build for the host binary and voxbench.
# All three run the image's config (deploy/docker/voxserve.yaml: espeak-ng, one worker process
# per usable CPU). Compose has two such replicas on the same cores behind nginx, so its figure is
# the proxy's cost plus that of twice the workers competing for the same CPUs.
# Usage: bench/deploy_bench.sh [build-dir] [seconds-per-point] [rounds] [concurrency]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
seconds=${2:-8}
rounds=${3:-3}
concurrency=${4:-4}
root=$(cd "$(dirname "$0")/.." && pwd)
project=vxbench$$
work=$(mktemp -d)
text="The quick brown fox jumps over the lazy dog."
config="$root/deploy/docker/voxserve.yaml"
# compose.yaml asks for 65536 open files, which Docker refuses above its own hard limit.
hard=$(ulimit -Hn); [ "$hard" = unlimited ] && hard=65536
export VOXSERVE_NOFILE=${VOXSERVE_NOFILE:-$(( hard < 65536 ? hard : 65536 ))}

cleanup() {
  [ -n "${host_pid:-}" ] && kill "$host_pid" 2>/dev/null || true
  docker rm -f "$project-container" >/dev/null 2>&1 || true
  (cd "$root/deploy/compose" && docker-compose -p "$project" down -v --timeout 5 >/dev/null 2>&1) || true
  rm -rf "$work"
}
trap cleanup EXIT

wait_ready() {  # url
  for _ in $(seq 600); do curl -sf "$1/health/ready" >/dev/null && return 0; sleep 0.2; done
  echo "not ready: $1" >&2; exit 1
}
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

host_port=$(free_port); cont_port=$(free_port); nginx_port=$(free_port)
"$build/bin/voxserve" --config "$config" --host 127.0.0.1 --port "$host_port" --grpc-port 0 \
  --models "" >"$work/host.log" 2>&1 &
host_pid=$!
docker run -d --name "$project-container" --network host --read-only --tmpfs /tmp voxserve:cpu \
  --config /etc/voxserve/voxserve.yaml --host 127.0.0.1 --port "$cont_port" --grpc-port 0 >/dev/null
(cd "$root/deploy/compose" && VOXSERVE_HTTP_PORT=127.0.0.1:$nginx_port VOXSERVE_GRPC_PORT=127.0.0.1:$(free_port) \
  PROMETHEUS_PORT=127.0.0.1:$(free_port) docker-compose -p "$project" up -d >/dev/null 2>&1)
wait_ready "http://127.0.0.1:$host_port"
wait_ready "http://127.0.0.1:$cont_port"
wait_ready "http://127.0.0.1:$nginx_port"

declare -A url=([host]="http://127.0.0.1:$host_port" [container]="http://127.0.0.1:$cont_port"
                [compose]="http://127.0.0.1:$nginx_port")
targets=(host container compose)
for round in $(seq "$rounds"); do
  for t in "${targets[@]}"; do
    "$build/bin/voxbench" --url "${url[$t]}" -c "$concurrency" -d "$seconds" --warmup 1 \
      --text "$text" --json "$work/$t-$round.json" >/dev/null
  done
done

/usr/bin/python3 - "$work" "$rounds" "${targets[@]}" <<'PY'
import json, statistics, sys
work, rounds, targets = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rows = {}
for t in targets:
    points = [json.load(open(f"{work}/{t}-{r}.json"))["points"][0] for r in range(1, rounds + 1)]
    rows[t] = (statistics.median(p["qps"] for p in points),
               statistics.median(p["latency_ms"]["p50"] for p in points),
               statistics.median(p["latency_ms"]["p95"] for p in points),
               sum(p["requests"] - p["ok"] for p in points))
base = rows["host"]
print(f"{'target':10} {'req/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'errors':>6} {'req/s ratio':>11} {'p50 ratio':>9}")
for t, (qps, p50, p95, errors) in rows.items():
    print(f"{t:10} {qps:8.1f} {p50:8.1f} {p95:8.1f} {errors:6d} {qps / base[0]:11.3f} {p50 / base[1]:9.3f}")
PY
