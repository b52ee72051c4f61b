#!/usr/bin/env bash
# What CosyVoice's warm-up buys (issue 40): the first request after /health/ready against the
# median of the next ones, with the model's default warm-up (`warmup: ["Hello."]`: every stage
# run by max_active segments before ready) and without it (`warmup: []`), on the same bundle,
# one server at a time. A voice is registered first in both (that clone runs the prompt
# encoders either way), so the difference is what the first synthesis pays: ORT's first runs of
# the LLM, flow and HiFT (arena growth; on CUDA, kernel loading and cuDNN's searches).
#
# Usage: bench/cosyvoice_warmup_bench.sh [build-dir] [bundle]
#   CV_BENCH_PROVIDER cpu|cuda (default cpu), CV_BENCH_THREADS (default nproc), CV_WARM_N (the
#   requests after the first, default 5), CV_BENCH_TEXT, CV_BENCH_PROMPT_WAV as cosyvoice_bench.sh.
set -euo pipefail
build=${1:-build}
bundle=${2:-$build/cosyvoice2-random-real}
here=$(cd "$(dirname "$0")" && pwd)
bin="$build/bin/voxserve"
py=/usr/bin/python3
provider=${CV_BENCH_PROVIDER:-cpu}
threads=${CV_BENCH_THREADS:-$(nproc)}
n=${CV_WARM_N:-5}
text=${CV_BENCH_TEXT:-The sky is blue.}
[ -x "$bin" ] || { echo "missing $bin: build first (make build)" >&2; exit 1; }
[ -f "$bundle/manifest.json" ] || { echo "missing $bundle/manifest.json" >&2; exit 1; }
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "provider: $provider, intra_op_threads: $threads; bundle: $bundle; text: \"$text\""
work=$(mktemp -d)
source "$here/start_server.sh"
export VOXSERVE_READY_TIMEOUT_S=${VOXSERVE_READY_TIMEOUT_S:-900}

for warmup in '["Hello."]' '[]'; do
  cat >"$work/voxserve.yaml" <<YAML
voices: {dir: $work/voices}
limits: {request_timeout_ms: 900000, max_request_timeout_ms: 900000}
models:
  - id: espeak
  - id: cosyvoice2
    engine: cosyvoice
    options: {path: $bundle, max_active: 4, llm_capacity: 1024, intra_op_threads: $threads,
              execution_provider: $provider}
    scheduling: {instances: 1}
    warmup: $warmup
YAML
  rm -rf "$work/voices"
  started=$(date +%s.%N)
  start_server --config "$work/voxserve.yaml"
  ready_s=$(echo "$(date +%s.%N) - $started" | bc)
  voice=$("$py" "$here/cosyvoice_bench.py" register --port "$port" --model cosyvoice2 \
    --wav "${CV_BENCH_PROMPT_WAV:-$bundle/goldens/prompt.wav}" --transcript "This is a short prompt recording.")
  times=()
  for i in $(seq 0 "$n"); do
    times+=("$(curl -s -o /dev/null -w '%{time_total}' "http://127.0.0.1:$port/v1/audio/speech" \
      -H 'Content-Type: application/json' \
      -d "{\"model\":\"cosyvoice2\",\"voice\":\"$voice\",\"input\":\"$text\",\"response_format\":\"pcm\",\"stream\":false,\"seed\":$i}")")
  done
  "$py" - "$warmup" "$ready_s" "${times[@]}" <<'PY'
import json, statistics, sys
warmup, ready, first, rest = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), [float(t) for t in sys.argv[4:]]
median = statistics.median(rest)
print(json.dumps({"warmup": json.loads(warmup), "ready_s": round(ready, 1), "first_s": round(first, 3),
                  "next_median_s": round(median, 3), "first_over_median": round(first / median, 2)}))
PY
  kill "$server"; wait "$server" 2>/dev/null || true
done
rm -rf "$work"
