// manifest.json of a CosyVoice bundle (docs/cosyvoice-bundle.md): the model's numbers and, per
// graph, its file and input/output signature. Parsing validates every field and reports every
// problem at once, each naming its field (e.g. "llm.num_kv_heads: expected an integer >= 1").
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace voxserve::engine::cosyvoice {

inline constexpr std::string_view kBundleFormat = "voxserve-cosyvoice-bundle";
// 2: the LLM is one step graph with GroupQueryAttention (llm_step*, docs/cosyvoice-bundle.md);
// format 1 (llm_backbone + llm_decoder) is refused with the command that remakes it.
inline constexpr int kBundleFormatVersion = 2;

enum class Family { kCosyVoice2, kCosyVoice3 };
std::string_view FamilyName(Family family);

// One dimension of a declared shape: a fixed size, or dynamic (size -1) with its axis name.
struct Dim {
  int64_t size = -1;
  std::string symbol;
  bool fixed() const { return size >= 0; }
};

struct TensorSignature {
  std::string name;
  std::string dtype;  // float32 | float16 | int32 | int64 | bool
  std::vector<Dim> shape;
};

struct GraphEntry {
  std::string role;    // key in "graphs", e.g. "campplus"
  std::string file;    // relative to the bundle directory
  std::string origin;  // upstream | export | stand-in
  std::vector<TensorSignature> inputs;
  std::vector<TensorSignature> outputs;
};

struct TensorEntry {
  std::string name;
  std::string file;
  std::string dtype;
  std::vector<int64_t> shape;
};

// Plain data, owned by value; immutable once parsed.
struct BundleManifest {
  int format_version = 0;
  Family family = Family::kCosyVoice2;
  std::string source_kind;  // checkpoint | random-weights

  struct Audio {
    int prompt_sample_rate = 0, sample_rate = 0, mel_bins = 0, mel_frame_rate = 0;
    int samples_per_mel_frame = 0, speaker_embedding_dim = 0, whisper_mel_bins = 0;
    double prompt_max_seconds = 0;
    // The flow's prompt mel's upper edge (feat_extractor fmax): optional, CosyVoice2's 8000 Hz
    // when absent; CosyVoice3's is the Nyquist rate (fmax: null in cosyvoice3.yaml).
    double prompt_mel_fmax = 8000;
  } audio;
  struct Tokens {
    int token_rate = 0, token_mel_ratio = 0;
  } tokens;
  struct Vocab {
    int64_t text_vocab_size = 0, speech_token_size = 0, speech_embedding_rows = 0;
    int64_t llm_embedding_rows = 0, head_outputs = 0;
  } vocab;
  struct SpecialIds {
    int64_t sos = 0, task_id = 0, eos = 0, endofprompt = 0;
    std::vector<int64_t> stop_tokens;
    // CosyVoice3's silent and breath FSQ ids (cli/model.py:423): of a run of them only the first
    // SilentRunFilter::kMaxRun reach the flow. Empty (CosyVoice2): none dropped.
    std::vector<int64_t> silent_tokens;
  } special_ids;
  struct Llm {
    int hidden_size = 0, num_layers = 0, num_attention_heads = 0, num_kv_heads = 0, head_dim = 0;
    double rope_theta = 0;
  } llm;
  struct Sampling {
    double top_p = 0, tau_r = 0, min_token_text_ratio = 0, max_token_text_ratio = 0;
    int top_k = 0, win_size = 0;
  } sampling;
  struct Flow {
    int n_timesteps = 0, pre_lookahead_len = 0, static_chunk_size = 0;
    double inference_cfg_rate = 0;
  } flow;
  struct Streaming {
    int token_hop_len = 0, token_max_hop_len = 0, stream_scale_factor = 0;
    int mel_cache_len = 0, source_cache_len = 0;
  } streaming;
  struct Hift {
    int n_fft = 0, hop_len = 0, nb_harmonics = 0, upsample_scale = 0;
    double sine_amp = 0, noise_std = 0, voiced_threshold = 0, audio_limit = 0;
    // CosyVoice3's causal HiFT: the mel frames conv_pre looks ahead (4; optional, 0 = CosyVoice2).
    int conv_pre_look_right = 0;
  } hift;

  std::map<std::string, GraphEntry> graphs;    // by role
  std::map<std::string, TensorEntry> tensors;  // by name
  std::string tokenizer_dir;
  std::vector<std::string> tokenizer_files;
  std::string goldens_index;  // relative path; empty when the bundle has no goldens

  const GraphEntry* graph(std::string_view role) const;
};

// Parses and validates manifest.json's text. InvalidArgument lists every problem, one per line,
// each starting with the field's path; `where` (e.g. the file's path) prefixes the message.
absl::StatusOr<BundleManifest> ParseBundleManifest(std::string_view json_text,
                                                   const std::string& where);

// Reads <dir>/manifest.json and parses it.
absl::StatusOr<BundleManifest> LoadBundleManifest(const std::string& dir);

// The graph roles (all but the optional ones) and tensors a bundle of `family` must have, and
// for each graph the element types and ranks of its inputs and outputs in order (what the C++
// stages feed and read).
inline constexpr size_t kAnyRank = static_cast<size_t>(-1);
struct RoleContract {
  std::string_view role;
  // (dtype, rank); dtype "int" = int32 or int64, rank kAnyRank = any.
  std::vector<std::pair<std::string_view, size_t>> inputs;
  std::vector<std::pair<std::string_view, size_t>> outputs;
  // llm_step*: then per layer past/present key/value, rank 4, of `tail_dtype`.
  bool variadic_tail = false;
  std::string_view tail_dtype = "float32";
  // A bundle without it still loads (flow_encoder_stream: older exports); when present it is
  // checked like the others.
  bool optional = false;
};
const std::vector<RoleContract>& RoleContracts(Family family);
std::vector<std::string_view> RequiredTensors(Family family);

}  // namespace voxserve::engine::cosyvoice
