#!/usr/bin/env bash
# CosyVoice2 serving figures (issue 13, "Benchmark") on a real-dimension random-weight bundle
# (`make cosyvoice-bundle`: Qwen2.5-0.5B-sized LLM, 24 layers, hidden 896, 14/2 heads; flow and
# HiFT at their sizes) and its int8 copy (tools/cosyvoice_export/quantize_llm.py):
#   LLM tokens/s and end-to-end RTF at concurrency 1/4/16, continuous batching on (max_active 16)
#   and off (max_active 1); time to first audio with `streaming: true` at c=1 and c=16, and the
#   largest inter-chunk gap against the earlier chunk's audio length at c=16; fp32 and int8.
# One voxserve per configuration (a real-size engine holds ~3 GB; one at a time keeps the machine's
# memory for the others), a voice registered from the bundle's goldens/prompt.wav.
#
# Usage: bench/cosyvoice_bench.sh [build-dir] [bundle] [int8-bundle]
#   build-dir   default build (a release build: make build, or cmake -DCMAKE_BUILD_TYPE=Release)
#   bundle      default $build/cosyvoice2-random-real (make cosyvoice-bundle)
#   int8-bundle default <bundle>-int8, made by quantize_llm.py when missing ("none": fp32 only)
# Knobs (environment):
#   CV_BENCH_PROVIDER   ONNX Runtime execution provider: cpu (default) or cuda
#   CV_BENCH_THREADS    intra_op_threads (default: nproc)
#   CV_BENCH_CONFIGS    which configurations, default "fp32-b16 fp32-b1 int8-b16 int8-b1
#                       fp32-stream int8-stream" (bN = max_active N; stream = streaming, max_active 16)
#   CV_BENCH_CONCURRENCY  default "1 4 16"
#   CV_BENCH_STREAM_CONCURRENCY  streaming configurations' points (default: the first and last of
#                       CV_BENCH_CONCURRENCY)
#   CV_BENCH_B1_MAX_C   batching off serializes requests: its points stop at this concurrency
#                       (default 4: c=16 would take 16x c=1 and add nothing but the same rate)
#   CV_BENCH_FLOW_BUCKET  flow_length_bucket for every configuration (mel frames; default 0)
#   CV_BENCH_TEXT       the sentence (default below); CV_BENCH_STREAM_TEXT for streaming
#   CV_BENCH_MAX_S      a request taking longer counts as failed (default 900; also the server's
#                       request deadline)
#   CV_BENCH_WARMUP     0: no unmeasured "Hi." request before a configuration's points
#   CV_BENCH_NO_LLM     1: skip the LLM-alone part
#   CV_BENCH_OUT        results file (JSON lines; default /tmp/cosyvoice-bench.jsonl)
#   CV_BENCH_PROMPT_WAV the voice's recording (default <bundle>/goldens/prompt.wav; a bundle
#                       exported with --no-goldens has none)
set -euo pipefail
build=${1:-build}
bundle=${2:-$build/cosyvoice2-random-real}
int8=${3:-$bundle-int8}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bin="$build/bin/voxserve"
py=/usr/bin/python3
provider=${CV_BENCH_PROVIDER:-cpu}
threads=${CV_BENCH_THREADS:-$(nproc)}
configs=${CV_BENCH_CONFIGS:-fp32-b16 fp32-b1 int8-b16 int8-b1 fp32-stream int8-stream}
concurrency=${CV_BENCH_CONCURRENCY:-1 4 16}
b1_max_c=${CV_BENCH_B1_MAX_C:-4}
# Random weights rarely sample eos (6561 is one of 6564 logits and RAS keeps the top 25), so a
# piece runs to max_len = 20 x its text tokens (llm.py:498): this sentence's 5 Qwen tokens make
# 100 speech tokens, 4 s of audio. The streaming one is longer so that one piece has several
# chunks (hops of 25 padded, 50, then 100 tokens: cli/model.py:343-375).
text=${CV_BENCH_TEXT:-The sky is blue.}
stream_text=${CV_BENCH_STREAM_TEXT:-The sky is blue and the sea is green.}
max_s=${CV_BENCH_MAX_S:-900}
out=${CV_BENCH_OUT:-/tmp/cosyvoice-bench.jsonl}
[ -x "$bin" ] || { echo "missing $bin: build first (make build)" >&2; exit 1; }
[ -f "$bundle/manifest.json" ] || {
  echo "missing $bundle: make cosyvoice-bundle COSYVOICE_BUNDLE=$bundle" >&2; exit 1; }
if [[ " $configs " == *" int8-"* ]]; then
  [ "$int8" = none ] && { echo "int8 configurations need an int8 bundle" >&2; exit 1; }
  if [ ! -f "$int8/manifest.json" ]; then
    echo "quantizing the LLM into $int8 ..."
    "$py" "$root/tools/cosyvoice_export/quantize_llm.py" "$bundle" "$int8"
  fi
fi

: >"$out"
: >"${out%.jsonl}-llm.jsonl"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
  "$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo); date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "provider: $provider, intra_op_threads: $threads; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "bundle: $bundle ($(du -sm "$bundle" | cut -f1) MB); text: \"$text\"; streaming text: \"$stream_text\""

# The LLM alone first (bench/cosyvoice_llm_bench.cc): its decode-only rate per batch size.
llm_bench="$build/bin/cosyvoice_llm_bench"
if [ -x "$llm_bench" ] && [ -z "${CV_BENCH_NO_LLM:-}" ]; then
  for variant in fp32 int8; do
    dir=$bundle
    [ "$variant" = int8 ] && dir=$int8
    [ -f "$dir/manifest.json" ] || continue
    echo "LLM alone, $variant (decode-only steps; batches 1, 4, 16):"
    "$llm_bench" "$dir" 1,4,16 "${CV_BENCH_LLM_STEPS:-24}" "$threads" "$provider" |
      sed "s/^{/{\"variant\": \"$variant\", /" | tee -a "${out%.jsonl}-llm.jsonl"
  done
elif [ -z "${CV_BENCH_NO_LLM:-}" ]; then
  echo "(no $llm_bench: cmake -DVOXSERVE_BUILD_BENCH=ON, --target cosyvoice_llm_bench, for the LLM alone)"
fi

work=$(mktemp -d)
# start_server sets the EXIT trap (it stops the server); the work dir goes at the end.
source "$here/start_server.sh"
export VOXSERVE_READY_TIMEOUT_S=${VOXSERVE_READY_TIMEOUT_S:-900}

for config in $configs; do
  variant=${config%%-*}
  kind=${config#*-}
  dir=$bundle
  [ "$variant" = int8 ] && dir=$int8
  max_active=16 streaming=false first_hop=0
  case $kind in
    b*) max_active=${kind#b} ;;
    stream) streaming=true ;;
    stream15) streaming=true first_hop=15 ;;  # stream_first_hop 15 (the Triton runtime's start)
    *) echo "unknown configuration $config" >&2; exit 1 ;;
  esac
  # KV slots per row: the prompt's speech tokens (~55 for the 2.2 s goldens prompt) + prompt and
  # text tokens + max_len; the attention runs over all of them (masked), so no more than needed.
  cat >"$work/voxserve.yaml" <<EOF
voices: {dir: $work/voices-$config}
# The default 60 s request deadline is shorter than one real-size request on 2 busy cores.
limits: {request_timeout_ms: $(( max_s * 1000 )), max_request_timeout_ms: $(( max_s * 1000 ))}
models:
  - id: espeak
  - id: cosyvoice2
    engine: cosyvoice
    options: {path: $dir, max_active: $max_active, llm_capacity: 1024, streaming: $streaming,
              stream_first_hop: $first_hop, flow_length_bucket: ${CV_BENCH_FLOW_BUCKET:-0},
              intra_op_threads: $threads,
              execution_provider: $provider}
    scheduling: {instances: 1, queue_capacity: 64}
EOF
  echo
  echo "== $config: max_active $max_active, streaming $streaming, first hop $first_hop ($(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))"
  started=$(date +%s)
  start_server --config "$work/voxserve.yaml"
  echo "   ready after $(( $(date +%s) - started )) s; registering the voice"
  voice=$("$py" "$here/cosyvoice_bench.py" register --port "$port" --model cosyvoice2 \
    --wav "${CV_BENCH_PROMPT_WAV:-$bundle/goldens/prompt.wav}" --transcript "This is a short prompt recording.")
  sentence=$text sse=""
  cs=$concurrency
  if [ "$streaming" = true ]; then
    sentence=$stream_text sse=--sse
    cs=${CV_BENCH_STREAM_CONCURRENCY:-"$(echo $concurrency | cut -d' ' -f1) $(echo $concurrency | rev | cut -d' ' -f1 | rev)"}
  fi
  # Warm-up: ORT's first run of each graph shape allocates and plans; not measured.
  if [ "${CV_BENCH_WARMUP:-1}" = 1 ]; then
    "$py" "$here/cosyvoice_bench.py" point --port "$port" --model cosyvoice2 --voice "$voice" \
      -c 1 --label warmup --text "Hi." --max-seconds "$max_s" >/dev/null
  fi
  for c in $cs; do
    if [ "$max_active" = 1 ] && [ "$c" -gt "$b1_max_c" ]; then continue; fi
    "$py" "$here/cosyvoice_bench.py" point --port "$port" --model cosyvoice2 --voice "$voice" \
      -c "$c" $sse --label "$config" --text "$sentence" --max-seconds "$max_s" \
      --server-pid "$server" | tee -a "$out"
  done
  kill "$server"; wait "$server" 2>/dev/null || true
done
echo
"$py" "$here/cosyvoice_bench.py" table "$out"
rm -rf "$work"
