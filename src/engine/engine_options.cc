#include "engine/engine_options.h"

namespace voxserve::engine {
namespace {

constexpr EngineOptionDoc kEspeak[] = {
    {"data_path", "string", "the library's own", "", "espeak-ng's data folder (`espeak-ng-data`)."},
    {"synthesis_timeout_ms", "integer", "30000", "100..3600000",
     "A synthesis still running after this is ended (its speaker process killed and replaced) and "
     "answered with an error: a hang in the library costs one request, not an instance."},
};

constexpr EngineOptionDoc kPiper[] = {
    {"model", "string", "none (required)", "", "The voice's `.onnx` file."},
    {"config", "string", "<model>.json", "", "The voice's `.onnx.json`."},
    {"espeak_data_path", "string", "espeak-ng's own", "", "espeak-ng's data folder (phonemes)."},
    {"sentence_silence", "number", "0.2", "0..10", "Seconds of silence after each sentence."},
    {"normalize_audio", "boolean", "true", "true, false",
     "Each sentence peak-normalized, as Piper's Python does."},
    {"noise_scale", "number", "from the .onnx.json", "0..10",
     "Overrides the voice's inference scale."},
    {"length_scale", "number", "from the .onnx.json", "0.01..100",
     "Overrides the voice's inference scale (larger is slower)."},
    {"noise_w", "number", "from the .onnx.json", "0..10", "Overrides the voice's inference scale."},
    {"max_batch_size", "integer", "8", "1..256",
     "Segments per graph run, for graphs that batch (those with per-phoneme duration outputs, "
     "as piper1-gpl's `patch_voice_with_alignment` makes); others run one segment per call."},
};

constexpr EngineOptionDoc kKokoro[] = {
    {"model", "string", "none (required)", "", "The model's `.onnx` (fp32, fp16 or int8)."},
    {"voices", "string", "none (required)", "",
     "The voices file (`voices-v1.0.bin`, NumPy NPZ) or a folder of `<voice>.bin`."},
    {"config", "string", "config.json beside the model", "",
     "A `config.json` with the vocabulary, for graphs without `kokoro_config` metadata."},
    {"espeak_data_path", "string", "espeak-ng's own", "", "espeak-ng's data folder (phonemes)."},
    {"espeak_voice", "string", "by the voice's first letter", "",
     "Phonemize every voice with this espeak-ng voice instead of by the voice name's language "
     "letter (`a` American English, `b` British, ...)."},
};

constexpr EngineOptionDoc kCosyVoice[] = {
    {"path", "string", "none (required)", "",
     "The bundle directory (`tools/cosyvoice_export/export.py` writes one; "
     "[bundles](cosyvoice-bundle.md))."},
    {"max_active", "integer", "4", "1..256",
     "Segments one instance decodes together (rows of its LLM's KV cache)."},
    {"llm_capacity", "integer", "2048", "2..65536",
     "KV cache slots per row: prompt + transcript + text + up to 20 speech tokens per text "
     "token must fit (a 10 s prompt and a 60-token sentence take about 1500)."},
    {"max_prefills_per_step", "integer", "1", "1..256",
     "Newcomers prefilled per LLM step, at most `max_active`: each prefill stalls the running "
     "streams for that step."},
    {"streaming", "boolean", "false", "true, false",
     "Upstream's streaming hop schedule with the chunk-causal flow encoder; off: one chunk per "
     "normalized piece ([generation](cosyvoice-generation.md))."},
    {"stream_first_hop", "integer", "0", "0..1000",
     "Streaming: speech tokens of a piece's first chunk, unpadded (0: upstream's 25 padded so "
     "that prompt + hop is whole hops, about 47 with a typical prompt; otherwise at least 5, "
     "what HiFT holds back, checked at load). 15 gives audio after 18 tokens instead of about "
     "50; what it costs: [generation](cosyvoice-generation.md#the-hop-schedule)."},
    {"stream_max_hop", "integer", "0", "0..1000",
     "Streaming: the longest hop, in tokens, the hops doubling up to it (0: the bundle's "
     "token_max_hop_len, 100; otherwise at least the first hop, checked at load). Smaller: more, "
     "smaller chunks, each flow run over the whole prefix again."},
    {"flow_length_bucket", "integer", "0", "0..1000",
     "Mel frames (50 a second): flow runs waiting together (streams' hops, pieces) whose lengths "
     "round up to the same multiple of it share each estimator call, the shorter ones padded "
     "and masked, their mel as alone within float rounding; 0: only equal lengths share. Needs "
     "an estimator with a dynamic batch axis; pays where one call of many rows costs about one "
     "of few (a GPU), not on a few CPU cores "
     "([generation](cosyvoice-generation.md#flow-matching), Length buckets)."},
    {"vocoder_threads", "integer", "1", "1..64",
     "Threads running flow + HiFT for all of the model's instances, off the LLM's step thread."},
    {"warmup_synthesis", "string", "auto", "auto, on, off",
     "Whether the model's `warmup` texts are spoken through every stage (LLM prefill and batched "
     "decode, flow, HiFT) by `max_active` segments at once before the model is ready, after a "
     "voice cloned from a synthetic prompt: `auto` = on with `execution_provider: cuda` (first "
     "runs load kernels and search cuDNN's algorithms), off on the CPU, where only the prompt "
     "encoders run (a first request there measured no slower, and speaking costs about a minute "
     "of startup at real size)."},
    {"llm_precision", "string", "auto", "auto, fp32, fp16, bf16",
     "The LLM step graph the bundle holds in that precision: `auto` = fp16 with "
     "`execution_provider: cuda`, fp32 on the CPU (bf16: CUDA only; fp32: CPU only)."},
    {"llm_cuda_graphs", "string", "auto", "auto, on, off",
     "CUDA graphs for the LLM's decode steps, one per batch bucket (1, 2, 4, ... max_active), "
     "captured at load; `auto` = on with CUDA. Without them (or where ONNX Runtime refuses them) "
     "steps run plainly, logged once."},
    {"llm_attention", "string", "flash", "flash, auto",
     "The LLM's CUDA attention kernel: flash attention (compute capability 8.0 and later) reads "
     "each row's filled cache slots; `auto` leaves ONNX Runtime's choice (older GPUs)."},
};

constexpr EngineOptionDoc kTone[] = {
    {"sample_rate", "integer", "16000", "8000..48000", "Sample rate of the tone."},
    {"chunk_ms", "integer", "200", "10..2000", "Audio per chunk (one chunk per word) at speed 1."},
    {"step_ms", "integer", "20", "0..1000",
     "Time one step takes, once per step however many segments are active."},
    {"max_active", "integer", "16", "1..1024", "The engine's own cap on active segments."},
};

constexpr EngineOptionDoc kOnnxSession[] = {
    {"intra_op_threads", "integer", "0", "0..1024",
     "ONNX Runtime threads per run; 0 = one per core, or in worker processes max(1, cores / "
     "workers sharing them). Instances x threads should not exceed the cores."},
    {"inter_op_threads", "integer", "0", "0..1024",
     "ONNX Runtime's parallel executor; 0 = its default."},
    {"graph_optimization", "string", "all", "disable, basic, extended, all",
     "ONNX Runtime graph optimization level."},
    {"optimized_model_path", "string", "", "",
     "Where to write the optimized graph at load, for a faster later start (same machine and "
     "provider)."},
    {"allow_spinning", "boolean", "false", "true, false",
     "Busy-waiting of ONNX Runtime's threads between ops (burns cores other requests need)."},
    {"cpu_memory_arena", "string", "shrink", "off, on, shrink",
     "`shrink`: the arena gives a long sentence's blocks back after its run; `on` keeps the "
     "largest ever seen; `off` allocates every tensor anew (figures: bench/RESULTS.md)."},
    {"arena_keep_elements", "integer", "512", "0..1099511627776",
     "With `shrink`: runs with more input elements than this give their blocks back."},
    {"execution_provider", "string", "cpu", "cpu, cuda",
     "`cuda` needs the GPU build of ONNX Runtime ([engines and models](models.md#onnx-runtime))."},
    {"cuda_device_id", "integer", "0", "0..1023",
     "The GPU (worker processes placed with `scheduling.devices` use 0 of what they see)."},
    {"cuda_memory_limit_bytes", "integer", "0", "0..1125899906842624",
     "The CUDA arena's limit; 0 = none."},
    {"cudnn_conv_algo_search", "string", "heuristic", "heuristic, exhaustive, default",
     "cuDNN convolution algorithm search; exhaustive re-benchmarks every new sentence length."},
    {"cuda_tf32", "boolean", "false", "true, false",
     "TensorFloat-32 for float32 MatMul/Conv on the GPU: faster, but ~1e-3 off float32 (off "
     "computes as upstream's PyTorch does; the float16 bundle is the checked speed lever)."},
};

constexpr EngineOptionsDoc kEngines[] = {
    {"espeak", "espeak-ng, built in: 100+ languages, no model files.", kEspeak},
    {"piper", "A Piper (VITS) voice: `.onnx` + `.onnx.json`. Also takes the ONNX session options.",
     kPiper},
    {"kokoro", "Kokoro-82M: the model and its voices file. Also takes the ONNX session options.",
     kKokoro},
    {"cosyvoice",
     "CosyVoice 2 from a bundle directory (a streaming engine). Also takes the ONNX session "
     "options.",
     kCosyVoice},
    {"tone", "Diagnostic streaming engine: a sine chunk per word and step, no model.", kTone},
    {"onnx", "ONNX Runtime session options, taken by piper, kokoro and cosyvoice.", kOnnxSession},
};

}  // namespace

std::span<const EngineOptionsDoc> EngineOptionDocs() { return kEngines; }

}  // namespace voxserve::engine
