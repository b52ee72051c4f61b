#!/usr/bin/env bash
# CosyVoice's GPU check in one prepared script (docs/cosyvoice-generation.md, "On a GPU"): the
# tiny bundle's oracle checks with the CUDA provider, then the real-dimension figures (LLM
# tokens/s at batch 1/4/16, the flow alone, served tokens/s, TTFA and RTF at c = 1/4/16), all
# written under $OUT. Sized for the device tool (/work/.library/device/README.md): one H200,
# 64 MiB carried per call, a machine that stays warm 30 s after a call, nothing fetched there.
#
#   scripts/gpu-check.sh --prepare [--part-mib 56] [--build-dir build-gpu-check]
#       here, once: fetches ONNX Runtime's CUDA package (scripts/fetch-onnxruntime.sh --gpu),
#       builds the release binaries it needs, writes the tiny bundle (and its fp16 copy), packs
#       all that with the libraries the binaries load into .gpu-check/part-NN (git-ignored) and
#       SHA256SUMS, and prints the device calls to make.
#   scripts/gpu-check.sh --part N [--assemble] [--run]
#       on the device, one call per part, each carrying .gpu-check/part-NN and SHA256SUMS (the
#       calls must follow each other within the warm window: the parts wait in $STASH).
#   scripts/gpu-check.sh --assemble       checks every part and the whole against SHA256SUMS, unpacks
#   scripts/gpu-check.sh --run [--skip-real] [--skip-oracles] [--provider cuda] [--budget-s S]   the checks, JSON and
#       logs in $OUT: the tiny bundle's oracle checks first, then the real-dimension export and
#       figures; with --budget-s, steps are cut short or skipped S seconds after the script started
#       (summary.json is rewritten after every step, so a run the device cuts off still reports)
#   scripts/gpu-check.sh --dry-run [--build-dir build-asan] [--bundle DIR] [--out DIR]
#       here, in `make test` (CTest gpu_check_dry_run): the carry round trip on a small file and
#       --run's steps with the CPU provider on the tiny bundle, without the real-size part.
#
# What a device run writes under $OUT (the tool returns at most 8 files): summary.json (each
# step, its exit status and seconds), device.txt (nvidia-smi), verify.txt (verify-bundle of the
# tiny bundle with each LLM precision, and its fp16 copy), unit-tests.txt, llm-bench.jsonl (the
# LLM alone per precision, its optimized graph's Memcpy count, the upstream PyTorch peer),
# flow-bench.jsonl,
# cosyvoice-bench.jsonl (served, with streaming and stream_first_hop 15, and upstream's own
# streaming CosyVoice2Model beside it; upstream's CosyVoice3Model whole and streaming), log.txt
# (every step's output, cosyvoice_rtf_bench's CosyVoice2 / CosyVoice3 table among them).
# CosyVoice3's steps come last in each part (its tiny bundle after the oracle checks, its real
# one after the CosyVoice2 figures), so a --budget-s run drops them first.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
stage="$root/.gpu-check"
STASH=${VOXSERVE_GPU_STASH:-/tmp/voxserve-gpu-check}
py=${VOXSERVE_GPU_PYTHON:-}
part_mib=56  # + the ~4 MiB working tree stays under the tool's 64 MiB per call
build_dir=""
bundle=""
out=""
provider=cuda
skip_real=0
skip_oracles=0  # --skip-oracles: the real-size figures alone (the oracle checks ran already)
budget_s=0  # --budget-s: steps that would end past it are cut short or skipped
quick=0
work=""
modes=()
part=""

usage() { sed -n '2,/^set -euo/p' "$0" | grep '^#'; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --prepare|--assemble|--run|--dry-run) modes+=("${1#--}") ;;
    --part) part=${2:?--part needs a number}; modes+=(part); shift ;;
    --part-mib) part_mib=${2:?}; shift ;;
    --build-dir) build_dir=${2:?}; shift ;;
    --bundle) bundle=${2:?}; shift ;;
    --out) out=${2:?}; shift ;;
    --provider) provider=${2:?}; shift ;;
    --skip-real) skip_real=1 ;;
    --budget-s) budget_s=${2:?}; shift ;;
    --skip-oracles) skip_oracles=1 ;;
    -h|--help) usage 0 ;;
    *) echo "gpu-check: unknown argument '$1'" >&2; usage ;;
  esac
  shift
done
[ ${#modes[@]} -gt 0 ] || usage

log() { echo "gpu-check: $*" >&2; }
die() { log "$*"; exit 1; }
python() { "${py:-$(command -v /usr/bin/python3 || command -v python3)}" "$@"; }

# --- carrying the payload in parts ------------------------------------------------------------

# Splits FILE into parts of $part_mib MiB in DIR with SHA256SUMS (every part, then the whole).
pack() {
  local file=$1 dir=$2
  mkdir -p "$dir"
  rm -f "$dir"/part-* "$dir/SHA256SUMS"
  split -b "${part_mib}M" -d -a 2 "$file" "$dir/part-"
  (cd "$dir" && sha256sum part-* >SHA256SUMS)
  echo "$(sha256sum "$file" | cut -d' ' -f1)  payload.tar.xz" >>"$dir/SHA256SUMS"
}

# Checks part N (from DIR) against SHA256SUMS and moves it into STASH/parts.
stash_part() {
  local n dir=$1 name sums
  n=$(printf '%02d' "$((10#$2))")
  name="part-$n"
  sums="$dir/SHA256SUMS"
  [ -f "$dir/$name" ] || die "no $dir/$name here: carry .gpu-check/$name with this call"
  [ -f "$sums" ] || die "no $sums: carry .gpu-check/SHA256SUMS with every part"
  local want have
  want=$(grep " $name\$" "$sums" | cut -d' ' -f1)
  have=$(sha256sum "$dir/$name" | cut -d' ' -f1)
  [ -n "$want" ] || die "$name is not in $sums"
  [ "$want" = "$have" ] || die "$name: checksum $have, SHA256SUMS says $want (carried damaged?)"
  mkdir -p "$STASH/parts"
  cp "$sums" "$STASH/parts/SHA256SUMS"
  mv "$dir/$name" "$STASH/parts/$name"
  local total present
  total=$(grep -c ' part-' "$sums")
  present=$(ls "$STASH/parts" | grep -c '^part-' || true)
  log "$name stashed in $STASH/parts ($present of $total present)"
}

# All parts present and intact, joined and checked as a whole, unpacked into STASH/payload.
assemble() {
  local parts="$STASH/parts" sums="$STASH/parts/SHA256SUMS"
  [ -f "$sums" ] || die "no parts stashed in $parts (run --part N for each part first)"
  local missing=()
  for name in $(grep ' part-' "$sums" | awk '{print $2}'); do
    [ -f "$parts/$name" ] || missing+=("$name")
  done
  [ ${#missing[@]} -eq 0 ] || die "missing ${missing[*]} (the machine went back between calls? start again from part 0)"
  (cd "$parts" && grep ' part-' SHA256SUMS | sha256sum -c --quiet) || die "a stashed part is damaged"
  cat "$parts"/part-* >"$STASH/payload.tar.xz"
  local want have
  want=$(grep ' payload.tar.xz$' "$sums" | cut -d' ' -f1)
  have=$(sha256sum "$STASH/payload.tar.xz" | cut -d' ' -f1)
  [ "$want" = "$have" ] || die "the joined payload's checksum is $have, SHA256SUMS says $want"
  rm -rf "$STASH/payload" && mkdir -p "$STASH/payload"
  # Python's tarfile reads xz itself: the device image need not have xz.
  python -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
    "$STASH/payload.tar.xz" "$STASH/payload"
  rm -f "$STASH/payload.tar.xz" "$parts"/part-*
  log "payload unpacked in $STASH/payload ($(du -sm "$STASH/payload" | cut -f1) MB)"
}

# --- preparing (here) -------------------------------------------------------------------------

GPU_BINARIES="voxserve cosyvoice_llm_bench cosyvoice_flow_bench cosyvoice_rtf_bench
  unit_engine_cosyvoice_llm_tests
  unit_engine_cosyvoice_flow_tests unit_engine_cosyvoice_bundle_tests"

prepare() {
  local build=${build_dir:-$root/build-gpu-check}
  local ref=${VOXSERVE_COSYVOICE_REF:-$root/../shared/oracles/CosyVoice}
  [ -d "$ref/cosyvoice" ] || die "no upstream CosyVoice at $ref (set VOXSERVE_COSYVOICE_REF)"
  "$root/scripts/fetch-onnxruntime.sh" --gpu
  if [ ! -f "$build/build.ninja" ]; then
    # The GPU build (README, "GPU (CUDA)"): linked against the CUDA package's libonnxruntime.
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVOXSERVE_ONNX=ON \
      -DVOXSERVE_ONNXRUNTIME_GPU=ON -DVOXSERVE_BUILD_UNIT_TESTS=ON -DVOXSERVE_BUILD_BENCH=ON
  fi
  # Those of them this build has (a tree without benchmarks or unit tests still packs: --run
  # skips what is not there).
  local targets=""
  for b in $GPU_BINARIES; do
    if ninja -C "$build" -t query "bin/$b" >/dev/null 2>&1; then
      targets+=" $b"
    else
      log "$build has no target $b: it will be missing from the payload"
    fi
  done
  # shellcheck disable=SC2086
  cmake --build "$build" -j "${JOBS:-2}" --target $targets
  local payload="$stage/payload"
  rm -rf "$payload" && mkdir -p "$payload/build/bin" "$payload/lib" "$payload/bundle" \
    "$payload/oracles"
  for b in $targets; do cp "$build/bin/$b" "$payload/build/bin/"; done
  # The libraries the binaries load, but glibc's, the C++ runtime's (the device's own are newer)
  # and ONNX Runtime's (the GPU package's go instead).
  for b in $targets; do ldd "$build/bin/$b"; done | awk '/=> \// {print $3}' | sort -u |
    grep -Ev '/(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|libonnxruntime[^/]*)\.so' |
    while read -r lib; do cp -L "$lib" "$payload/lib/"; done
  cp -r "$root/third_party/onnxruntime/gpu/lib" "$payload/onnxruntime"
  rm -f "$payload/onnxruntime/libonnxruntime_providers_tensorrt.so"  # not used
  # A binary linked against the CPU package asks for its symbol version (VERS_1.31.1), which the
  # GPU package's library (1.31.0) lacks: the loader would refuse it on the device.
  local have need
  have=$(objdump -T "$payload"/onnxruntime/libonnxruntime.so.1.* | grep -o 'VERS_[0-9.]*' | sort -u)
  for b in $targets; do
    need=$(objdump -T "$payload/build/bin/$b" | grep -o 'VERS_[0-9.]*' | sort -u)
    for v in $need; do
      grep -qx "$v" <<<"$have" || die "$b needs ONNX Runtime $v, the CUDA package has $(echo $have):" \
        "build it with -DVOXSERVE_ONNXRUNTIME_GPU=ON (the default build dir build-gpu-check is)"
    done
  done
  cp -r /usr/lib/x86_64-linux-gnu/espeak-ng-data "$payload/espeak-ng-data"
  local tiny="$payload/bundle/cosyvoice-tiny"
  # Its fp16 copy is made on the device (fp16.py needs only onnx): ~75 MB less to carry.
  VOXSERVE_COSYVOICE_REF="$ref" python "$root/tools/cosyvoice_export/export.py" \
    --random-weights --size tiny --estimator-batch fixed --out "$tiny"
  python "$root/tests/unit/engine/cosyvoice_flow/make_dynamic_batch_estimator.py" "$tiny" \
    "$payload/bundle/estimator-dynamic-batch.onnx"
  VOXSERVE_COSYVOICE_REF="$ref" python \
    "$root/tests/unit/engine/cosyvoice_flow/make_stream_oracles.py" "$tiny" \
    "$payload/bundle/flow-stream-oracles"
  # The real-dimension bundle (~3 GB) cannot be carried: the device exports it from these.
  cp -r "$ref" "$payload/oracles/CosyVoice"
  [ -d "$ref/../Matcha-TTS" ] && cp -r "$ref/../Matcha-TTS" "$payload/oracles/Matcha-TTS"
  # xz: the CUDA package is 304 MB, 244 MB gzipped, 196 MB xz'd (minutes here, fewer calls there).
  tar -cf - -C "$payload" . | xz -T0 "-${VOXSERVE_GPU_XZ_LEVEL:-6}" >"$stage/payload.tar.xz"
  pack "$stage/payload.tar.xz" "$stage"
  rm -rf "$payload" "$stage/payload.tar.xz"
  local n last
  n=$(grep -c ' part-' "$stage/SHA256SUMS")
  last=$((n - 1))
  log "$n parts of at most $part_mib MiB in $stage. The device calls, one after another"
  log "(within the 30 s warm window), each with carry [\".gpu-check/part-NN\", \".gpu-check/SHA256SUMS\"]:"
  for i in $(seq 0 $((n - 2))); do
    log "  run(command=\"scripts/gpu-check.sh --part $i\", timeout_s=120)"
  done
  log "  run(command=\"scripts/gpu-check.sh --part $last --assemble --run\", timeout_s=600)"
}

# --- the checks (device, or the dry run here) -------------------------------------------------

summary=""
summary_file=""  # rewritten after every step: a run cut off by the device's limit still reports
summary_kind=""
export_ref=""  # an upstream checkout to export the real-dimension bundle from (device run)
started_at=$(date +%s)
# step NAME LOGFILE COMMAND...: runs it (bounded by its own timeout and by what is left of
# --budget-s), records status and time. A step with under 20 s left is skipped (rc "skipped").
step() {
  local name=$1 file=$2
  shift 2
  local started rc=0 limit=()
  started=$(date +%s)
  if [ "$budget_s" -gt 0 ]; then
    local left=$(( started_at + budget_s - started ))
    if [ "$left" -lt 20 ]; then
      summary+="${summary:+,}{\"step\": \"$name\", \"rc\": \"skipped\", \"seconds\": 0}"
      log "$name: skipped, ${left}s of the budget left"
      [ -z "$summary_file" ] || write_summary "$summary_file" "$summary_kind"
      return 0
    fi
    limit=(timeout "$left")
  fi
  echo "== $name ($(date -u +%H:%M:%S)): $*" >>"$file"
  "${limit[@]}" "$@" >>"$file" 2>&1 || rc=$?
  local seconds=$(( $(date +%s) - started ))
  summary+="${summary:+,}{\"step\": \"$name\", \"rc\": $rc, \"seconds\": $seconds}"
  log "$name: exit $rc after ${seconds}s"
  [ -z "$summary_file" ] || write_summary "$summary_file" "$summary_kind"
  return 0
}

write_summary() {
  local file=$1 kind=$2
  echo "{\"kind\": \"$kind\", \"provider\": \"$provider\", \"date\": \"$(date -u +%FT%TZ)\"," \
    "\"host\": \"$(uname -n)\", \"steps\": [$summary]}" >"$file"
}

# llm_checks BIN_DIR BUNDLE OUT PRECISIONS SIZE: the LLM alone (cosyvoice_llm_bench), into
# OUT/llm-bench.jsonl: per precision, ms per step at batch 1/4/16/32 (capacity 2048), prefills of
# 100 and 300 positions, and the Memcpy nodes of ORT's optimized step graph (0: nothing left on
# the host); the step at capacity 512/2048/8192 (flat: attention over the filled slots only);
# without CUDA graphs (what they save); and the same-card peer, upstream's own Qwen2LM in PyTorch
# on the same weights (bench/cosyvoice_llm_peer.py), at the first precision.
llm_checks() {
  local bin=$1 bundle=$2 o=$3 precisions=$4 size=$5
  [ -x "$bin/cosyvoice_llm_bench" ] || return 0
  local logf="$o/log.txt" jsonl="$o/llm-bench.jsonl" dumps
  dumps=$(mktemp -d)
  : >"$jsonl"
  local batches="1,4,16,32" steps=24 first=""
  [ "$quick" = 1 ] && batches="1,4" steps=6
  for p in $precisions; do
    first=${first:-$p}
    step "llm-bench-$p" "$logf" timeout 300 sh -c "'$bin/cosyvoice_llm_bench' '$bundle' $batches \
      $steps 0 '$provider' 2048 precision=$p prefill=100,300 optimized='$dumps/$p.onnx' >>'$jsonl'"
    step "llm-memcpy-$p" "$logf" python "$root/scripts/count-graph-ops.py" "$dumps/$p.onnx" "$p" \
      "$jsonl"
    rm -f "$dumps/$p.onnx"*
  done
  [ -n "$first" ] || return 0
  local capacities=512,2048,8192
  [ "$quick" = 1 ] && capacities=256,2048
  step "llm-bench-capacity" "$logf" timeout 300 sh -c "'$bin/cosyvoice_llm_bench' '$bundle' 1,16 \
    $steps 0 '$provider' $capacities precision=$first >>'$jsonl'"
  if [ "$provider" = cuda ]; then
    step "llm-bench-no-graphs" "$logf" timeout 300 sh -c "'$bin/cosyvoice_llm_bench' '$bundle' \
      1,16 $steps 0 cuda 2048 precision=$first cuda_graphs=off >>'$jsonl'"
  fi
  local ref=${export_ref:-${VOXSERVE_COSYVOICE_REF:-}}
  if [ -n "$ref" ]; then
    local device=cpu peer_batches="4,16,32" peer_steps=24
    [ "$provider" = cuda ] && device=cuda
    [ "$quick" = 1 ] && peer_batches="4" peer_steps=4
    step "llm-peer-$first" "$logf" timeout 300 sh -c "'$(command -v "${py:-/usr/bin/python3}")' \
      '$root/bench/cosyvoice_llm_peer.py' --ref '$ref' --size $size --device $device \
      --dtype $first --steps $peer_steps --batches $peer_batches >>'$jsonl'"
  fi
  rm -rf "$dumps"
}

# run_checks BIN_DIR TINY TINY_FP16 DYNAMIC_ESTIMATOR STREAM_ORACLES REAL(or "") OUT
run_checks() {
  local bin=$1 tiny=$2 tiny_fp16=$3 dynamic=$4 oracles=$5 real=$6 o=$7
  mkdir -p "$o"
  local logf="$o/log.txt"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi >"$o/device.txt" 2>&1 || true
  else
    { echo "no nvidia-smi: $(nproc) CPU cores"; uname -a; } >"$o/device.txt"
  fi
  # The LLM step graph's precisions this provider runs (ORT's GroupQueryAttention: fp32 and fp16
  # on the CPU, fp16 and bf16 on CUDA).
  local precisions="fp16 bf16"
  [ "$provider" = cpu ] && precisions="fp32 fp16"
  # The oracle checks: every golden stage of the tiny bundle with each LLM precision (a half one
  # against the float32 goldens within its stated bound), and of its fp16 flow/HiFT copy (fp16.py's
  # stated tolerances), on this provider.
  if [ "$skip_oracles" = 0 ]; then
    : >"$o/verify.txt"
    # The dry run verifies the last precision only (fp16: the CTest neighbours verify fp32).
    local verified=$precisions
    [ "$quick" = 1 ] && verified=${precisions##* }
    for p in $verified; do
      step "verify-tiny-llm-$p" "$o/verify.txt" timeout 300 "$bin/voxserve" verify-bundle "$tiny" \
        --execution-provider "$provider" --llm-precision "$p"
    done
    if [ -f "$tiny_fp16/manifest.json" ]; then
      step verify-tiny-fp16 "$o/verify.txt" timeout 300 "$bin/voxserve" verify-bundle "$tiny_fp16" \
        --execution-provider "$provider"
    fi
    # The unit tests that run graphs, on this provider: the LLM's goldens, batching and copy
    # counts, the flow's goldens and stacked batches, the runner and the vocoder pool.
    : >"$o/unit-tests.txt"
    local env_tests=(env VOXSERVE_TEST_EXECUTION_PROVIDER="$provider"
      VOXSERVE_COSYVOICE_BUNDLE="$tiny" VOXSERVE_DYNAMIC_BATCH_ESTIMATOR="$dynamic"
      VOXSERVE_FLOW_STREAM_ORACLES="$oracles")
    local tests=("unit_engine_cosyvoice_llm_tests LlmDecoderTest.*"
      "unit_engine_cosyvoice_flow_tests FlowMatcherTest.*:FlowStreamTest.*"
      "unit_engine_cosyvoice_bundle_tests CosyVoiceRunner.*:CosyVoiceVocoderPool.*")
    # The dry run's CTest neighbours run these in full already: only the copy counts here.
    [ "$quick" = 1 ] && tests=("unit_engine_cosyvoice_llm_tests LlmDecoderTest.ADecodeStep*")
    for t in "${tests[@]}"; do
      local binary=${t%% *} filter=${t#* }
      [ -x "$bin/$binary" ] || continue
      step "$binary" "$o/unit-tests.txt" timeout 300 "${env_tests[@]}" "$bin/$binary" \
        --gtest_filter="$filter"
    done
    # CosyVoice3 (issue 43), on the device only: its tiny bundle exported there (30 s, nothing
    # more to carry), verified, and the engine against upstream's CosyVoice3Model.tts end to end.
    if [ "$quick" = 0 ] && [ -n "$export_ref" ]; then
      local tiny3="$STASH/cosyvoice3-tiny"
      step export-tiny-cv3 "$logf" timeout 300 env VOXSERVE_COSYVOICE_REF="$export_ref" "$py" \
        "$root/tools/cosyvoice_export/export.py" --random-weights --size tiny \
        --family cosyvoice3 --llm-precisions fp32 --out "$tiny3"
      if [ -f "$tiny3/manifest.json" ]; then
        step verify-tiny-cv3 "$o/verify.txt" timeout 300 "$bin/voxserve" verify-bundle "$tiny3" \
          --execution-provider "$provider"
        step cv3-engine-tests "$o/unit-tests.txt" timeout 300 env \
          VOXSERVE_TEST_EXECUTION_PROVIDER="$provider" VOXSERVE_COSYVOICE3_TINY="$tiny3" \
          "$bin/unit_engine_cosyvoice_bundle_tests" --gtest_filter='CosyVoice3Engine.*'
      fi
    fi
  fi
  # The real-dimension bundle is exported here, after the oracle checks, so that a run cut short
  # by the device's time limit has those first.
  if [ -n "$real" ] && [ ! -f "$real/manifest.json" ] && [ -n "$export_ref" ]; then
    step export-real "$logf" timeout 420 env VOXSERVE_COSYVOICE_REF="$export_ref" "$py" \
      "$root/tools/cosyvoice_export/export.py" --random-weights --size real --no-goldens \
      --out "$real"
  fi
  [ -n "$real" ] && [ -f "$real/manifest.json" ] || real=""
  llm_checks "$bin" "${real:-$tiny}" "$o" "$precisions" "$([ -n "$real" ] && echo real || echo tiny)"
  local served=$tiny configs="fp32-b16" concurrency="1" text="Hi there."
  if [ -n "$real" ]; then
    served=$real configs="fp32-b16 fp32-stream fp32-stream15" concurrency="1 4 16"
    text="The sky is blue."
  fi
  # Served: tokens/s, RTF and (streaming) TTFA per concurrency (bench/cosyvoice_bench.sh).
  # The voice is the tiny bundle's golden prompt (a real bundle exported here has no goldens).
  # Its results file is kept outside $OUT and copied in: the bench also writes an (empty)
  # *-llm.jsonl beside it, one file more than the tool returns.
  local served_dir
  served_dir=$(mktemp -d)
  step served-bench "$logf" timeout 900 env CV_BENCH_PROVIDER="$provider" \
    CV_BENCH_PROMPT_WAV="$tiny/goldens/prompt.wav" \
    CV_BENCH_CONFIGS="$configs" CV_BENCH_CONCURRENCY="$concurrency" CV_BENCH_TEXT="$text" \
    CV_BENCH_NO_LLM=1 CV_BENCH_OUT="$served_dir/cosyvoice-bench.jsonl" CV_BENCH_MAX_S=300 \
    "$root/bench/cosyvoice_bench.sh" "$(dirname "$bin")" "$served" none
  cp "$served_dir/cosyvoice-bench.jsonl" "$o/" 2>/dev/null || true
  rm -rf "$served_dir"
  # The same-card streaming peer: upstream's own CosyVoice2Model.tts(stream=True) in PyTorch on
  # the same seeded weights, c=1 and c=4 threads (bench/cosyvoice_stream_peer.py), its lines
  # (kind "stream-peer") beside the served points; the dry run a tiny c=1 point on the CPU.
  local ref=${export_ref:-${VOXSERVE_COSYVOICE_REF:-}}
  if [ -n "$ref" ]; then
    local device=cpu size=tiny peer_args="--concurrency 1 --requests 1 --text-ids 2"
    [ "$provider" = cuda ] && device=cuda
    [ -n "$real" ] && size=real peer_args="--concurrency 1,4 --requests 2 --text-ids 10"
    step stream-peer "$logf" timeout 600 sh -c "'$(command -v "${py:-/usr/bin/python3}")' \
      '$root/bench/cosyvoice_stream_peer.py' --ref '$ref' --size $size --device $device \
      $peer_args >>'$o/cosyvoice-bench.jsonl'"
  fi
  if [ -n "$real" ]; then
    if [ -x "$bin/cosyvoice_flow_bench" ]; then
      step make-dynamic-estimator "$logf" python \
        "$root/tests/unit/engine/cosyvoice_flow/make_dynamic_batch_estimator.py" "$real" \
        "$real/estimator-dynamic-batch.onnx"
      step flow-bench "$logf" timeout 300 sh -c "'$bin/cosyvoice_flow_bench' '$real' \
        batches=1,4,16 estimator='$real/estimator-dynamic-batch.onnx' provider='$provider' \
        >'$o/flow-bench.jsonl'"
    fi
    # CosyVoice3 beside CosyVoice2 (issue 43): its real-dimension bundle, both end to end on the
    # same forced length (the table goes to log.txt: the tool returns 8 files), and upstream's
    # own CosyVoice3Model in PyTorch on the same weights, whole and streaming, as the peer.
    local real3="${real%/*}/cosyvoice3-random-real"
    if [ ! -f "$real3/manifest.json" ] && [ -n "$export_ref" ]; then
      step export-real-cv3 "$logf" timeout 420 env VOXSERVE_COSYVOICE_REF="$export_ref" "$py" \
        "$root/tools/cosyvoice_export/export.py" --random-weights --size real \
        --family cosyvoice3 --llm-precisions fp32 --no-goldens --out "$real3"
    fi
    if [ -f "$real3/manifest.json" ] && [ -x "$bin/cosyvoice_rtf_bench" ]; then
      step rtf-bench-cv2-cv3 "$logf" timeout 420 "$bin/cosyvoice_rtf_bench" "$real" "$real3" \
        tokens=100 repeats=2 provider="$provider"
    fi
    if [ -n "$ref" ]; then
      local whole
      for whole in --whole ""; do
        step "cv3-peer${whole}" "$logf" timeout 420 sh -c "'$(command -v "${py:-/usr/bin/python3}")' \
          '$root/bench/cosyvoice_stream_peer.py' --ref '$ref' --size real --device $device \
          --family cosyvoice3 $whole --concurrency 1,4 --requests 2 --text-ids 5 \
          --prompt-speech 75 >>'$o/cosyvoice-bench.jsonl'"
      done
    fi
  fi
}

device_run() {
  local payload="$STASH/payload"
  [ -d "$payload/build/bin" ] || die "no payload in $payload (--assemble first)"
  [ -n "${OUT:-}" ] || [ -n "$out" ] || die "no \$OUT and no --out: where should the results go?"
  local o=${out:-$OUT}
  mkdir -p "$o"
  # The device image's python3 (first on its PATH: the one with torch, onnx and the CUDA
  # wheels), not a system /usr/bin/python3.
  py=${VOXSERVE_GPU_PYTHON:-python3}
  # The CUDA 13 runtime and cuDNN are the device image's Python wheels (nvidia-*); the ONNX
  # Runtime GPU package and the Debian libraries came in the payload.
  local cuda_libs=""
  local site
  site=$(python -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null || true)
  for s in $site; do
    [ -d "$s/nvidia" ] || continue
    cuda_libs+=$(find "$s/nvidia" -name 'lib*.so*' -printf '%h\n' | sort -u | tr '\n' ':')
  done
  export LD_LIBRARY_PATH="$payload/onnxruntime:$payload/lib:${cuda_libs}${LD_LIBRARY_PATH:-}"
  export ESPEAK_DATA_PATH="$payload"
  if ! command -v curl >/dev/null; then
    # bench/start_server.sh asks /health/ready with curl -sf URL.
    mkdir -p "$STASH/shim"
    printf '%s\n' '#!/usr/bin/env python3' 'import sys, urllib.request' \
      'try: sys.exit(0 if urllib.request.urlopen(sys.argv[-1], timeout=5).status < 400 else 22)' \
      'except Exception: sys.exit(22)' >"$STASH/shim/curl"
    chmod +x "$STASH/shim/curl"
    export PATH="$STASH/shim:$PATH"
  fi
  summary_file="$o/summary.json" summary_kind=device
  local fp16="$STASH/cosyvoice-tiny-fp16"
  rm -rf "$fp16"
  step fp16-copy "$o/log.txt" python "$root/tools/cosyvoice_export/fp16.py" \
    "$payload/bundle/cosyvoice-tiny" "$fp16"
  local real=""
  [ "$skip_real" = 0 ] && real="$STASH/cosyvoice2-random-real"
  export_ref="$payload/oracles/CosyVoice"
  run_checks "$payload/build/bin" "$payload/bundle/cosyvoice-tiny" \
    "$fp16" "$payload/bundle/estimator-dynamic-batch.onnx" \
    "$payload/bundle/flow-stream-oracles" "$real" "$o"
  write_summary "$o/summary.json" device
  cat "$o/summary.json"
}

dry_run() {
  local build=${build_dir:-$root/build-asan}
  local tiny=${bundle:-$build/test-models/cosyvoice-tiny}
  if [ ! -f "$tiny/manifest.json" ]; then
    log "no tiny bundle at $tiny (its fixture needs VOXSERVE_COSYVOICE_REF): skipped"
    exit 77
  fi
  [ -x "$build/bin/voxserve" ] || die "no $build/bin/voxserve: build first"
  build=$(cd "$build" && pwd)
  tiny=$(cd "$tiny" && pwd)
  provider=cpu
  quick=1
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  local o=${out:-$work/out}
  summary_file="$o/summary.json" summary_kind=dry-run
  # The carry round trip on a small file: parts, stash, assemble, the checksum of the whole; a
  # damaged part is refused.
  STASH="$work/stash"
  part_mib=1
  mkdir -p "$work/payload/build/bin" "$work/parts"
  head -c 2500000 /dev/urandom >"$work/payload/build/bin/blob"
  tar -cf - -C "$work/payload" . | xz -T0 -1 >"$work/payload.tar.xz"
  pack "$work/payload.tar.xz" "$work/parts"
  local n
  n=$(grep -c ' part-' "$work/parts/SHA256SUMS")
  [ "$n" -ge 2 ] || die "dry run: expected several parts, got $n"
  cp "$work/parts/part-01" "$work/part-01.good"
  printf 'x' | dd of="$work/parts/part-01" bs=1 seek=100 conv=notrunc status=none
  if (stash_part "$work/parts" 1) 2>/dev/null; then die "dry run: a damaged part was taken"; fi
  mv "$work/part-01.good" "$work/parts/part-01"
  for i in $(seq 0 $((n - 1))); do stash_part "$work/parts" "$i"; done
  assemble
  cmp "$work/payload/build/bin/blob" "$STASH/payload/build/bin/blob" ||
    die "dry run: the assembled payload differs"
  log "carry round trip: $n parts, checksums and the whole ok"
  # The checks themselves, on the CPU provider, without the real-size part.
  local fp16="$work/cosyvoice-tiny-fp16"
  python "$root/tools/cosyvoice_export/fp16.py" "$tiny" "$fp16" >/dev/null
  run_checks "$build/bin" "$tiny" "$fp16" \
    "$build/test-models/cosyvoice-tiny-estimator-dynamic-batch.onnx" \
    "$build/test-models/flow-stream-oracles" "" "$o"
  write_summary "$o/summary.json" dry-run
  # Each step passed, and the served point wrote its figures.
  python - "$o" <<'EOF'
import json, sys
o = sys.argv[1]
summary = json.load(open(f"{o}/summary.json"))
failed = [s["step"] for s in summary["steps"] if s["rc"] != 0]
lines = [json.loads(line) for line in open(f"{o}/cosyvoice-bench.jsonl") if line.strip()]
points = [p for p in lines if p.get("kind") != "stream-peer"]
stream_peer = [p for p in lines if p.get("kind") == "stream-peer"]
need = ("tokens_per_s", "rtf_mean")
bad = [p for p in points if any(k not in p for k in need) or p.get("failed", 0)]
llm = [json.loads(line) for line in open(f"{o}/llm-bench.jsonl") if line.strip()]
kinds = {("decode" if "ms_per_step" in p else "prefill" if "prefill_ms_min" in p else
          p.get("kind")) for p in llm}
missing = {"decode", "prefill", "optimized_graph", "peer"} - kinds
if not any("continuity" in p and p.get("first_chunk_p50_s", 0) > 0 for p in stream_peer):
    missing.add("stream-peer")
if failed or not points or bad or missing:
    print(f"dry run failed: steps {failed}, {len(points)} points, bad {bad}, "
          f"llm-bench.jsonl lacks {sorted(missing)}", file=sys.stderr)
    print(open(f"{o}/log.txt").read()[-4000:], file=sys.stderr)
    sys.exit(1)
print(f"dry run ok: {len(summary['steps'])} steps, served point {points[0]}")
EOF
}

for mode in "${modes[@]}"; do
  case "$mode" in
    prepare) prepare ;;
    part) stash_part "$stage" "$part" ;;
    assemble) assemble ;;
    run) device_run ;;
    dry-run) dry_run ;;
  esac
done
