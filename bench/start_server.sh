# Sourced by the bench scripts: starts "$bin" on a free loopback port with any extra flags given
# to start_server, waits until it is ready, and sets $server (pid) and $port. The server is
# stopped when the calling script exits. VOXSERVE_READY_TIMEOUT_S (default 30) bounds the wait: a
# real-size CosyVoice bundle takes minutes to open its sessions on a busy machine.
start_server() {
  local log
  log=$(mktemp)
  "$bin" --host 127.0.0.1 --port 0 "$@" 2>"$log" &
  server=$!
  # `|| true`: under set -e a server already stopped would turn a finished run's status into 1.
  trap "kill $server 2>/dev/null || true; wait $server 2>/dev/null || true; rm -f '$log'" EXIT
  port=""
  for _ in $(seq $(( ${VOXSERVE_READY_TIMEOUT_S:-30} * 10 ))); do
    port=$(grep -o 'listening on http://[0-9.]*:[0-9]*' "$log" | grep -o '[0-9]*$' || true)
    [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null && return 0
    sleep 0.1
  done
  echo "voxserve did not become ready:" >&2
  cat "$log" >&2
  exit 1
}
