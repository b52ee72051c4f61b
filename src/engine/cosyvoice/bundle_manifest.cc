#include "engine/cosyvoice/bundle_manifest.h"

#include <filesystem>
#include <functional>
#include <set>
#include <sstream>

#include "absl/strings/str_join.h"
#include "core/error.h"
#include "core/read_file.h"
#include "nlohmann/json.hpp"

namespace voxserve::engine::cosyvoice {
namespace {

using nlohmann::json;

const std::set<std::string, std::less<>> kDtypes = {"float32", "float16", "bfloat16",
                                                    "int32",   "int64",   "bool"};

// Reads typed fields of one JSON object, recording a problem (with the field's path) for each
// missing or ill-typed one instead of stopping at the first.
class FieldReader {
 public:
  FieldReader(const json& object, std::string path, std::vector<std::string>& problems)
      : object_(object), path_(std::move(path)), problems_(problems) {}

  std::string Path(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }
  // An optional field: null when absent, without a problem.
  const json* FindOptional(std::string_view key) const {
    if (!object_.is_object() || !object_.contains(std::string(key))) return nullptr;
    return Find(key);
  }
  const json* Find(std::string_view key) const {
    if (!object_.is_object()) return nullptr;
    auto it = object_.find(std::string(key));
    if (it == object_.end()) {
      problems_.push_back(Path(key) + ": missing");
      return nullptr;
    }
    return &*it;
  }
  template <typename Int>
  void Integer(std::string_view key, Int& out, int64_t min = 1) const {
    const json* value = Find(key);
    if (value == nullptr) return;
    if (!value->is_number_integer() || value->get<int64_t>() < min) {
      problems_.push_back(Path(key) + ": expected an integer >= " + std::to_string(min) +
                          ", found " + value->dump());
      return;
    }
    out = static_cast<Int>(value->get<int64_t>());
  }
  void Number(std::string_view key, double& out, double min, double max) const {
    const json* value = Find(key);
    if (value == nullptr) return;
    if (!value->is_number() || value->get<double>() < min || value->get<double>() > max) {
      std::ostringstream range;
      range << min << " .. " << max;
      problems_.push_back(Path(key) + ": expected a number in " + range.str() + ", found " +
                          value->dump());
      return;
    }
    out = value->get<double>();
  }
  void String(std::string_view key, std::string& out) const {
    const json* value = Find(key);
    if (value == nullptr) return;
    if (!value->is_string() || value->get<std::string>().empty()) {
      problems_.push_back(Path(key) + ": expected a non-empty string, found " + value->dump());
      return;
    }
    out = value->get<std::string>();
  }
  // A nested object, or an empty one (with a problem) when missing or not an object.
  const json& Object(std::string_view key) const {
    static const json kEmpty = json::object();
    const json* value = Find(key);
    if (value == nullptr) return kEmpty;
    if (!value->is_object()) {
      problems_.push_back(Path(key) + ": expected an object");
      return kEmpty;
    }
    return *value;
  }
  std::vector<std::string>& problems() const { return problems_; }

 private:
  const json& object_;
  std::string path_;
  std::vector<std::string>& problems_;
};

// A path inside the bundle: relative, no "..", so a manifest cannot point outside its folder.
bool IsBundlePath(const std::string& rel) {
  if (rel.empty() || rel.front() == '/') return false;
  for (const auto& part : std::filesystem::path(rel)) {
    if (part == "..") return false;
  }
  return true;
}

void ReadFile(const FieldReader& r, std::string_view key, std::string& out) {
  r.String(key, out);
  if (!out.empty() && !IsBundlePath(out)) {
    r.problems().push_back(r.Path(key) + ": \"" + out +
                           "\" must be a relative path inside the bundle");
  }
}

std::vector<TensorSignature> ReadSignatures(const json& list, const std::string& path,
                                            std::vector<std::string>& problems) {
  std::vector<TensorSignature> out;
  if (!list.is_array() || list.empty()) {
    problems.push_back(path + ": expected a non-empty list of tensors");
    return out;
  }
  std::set<std::string> names;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string at = path + "[" + std::to_string(i) + "]";
    FieldReader r(list[i], at, problems);
    TensorSignature t;
    r.String("name", t.name);
    if (!t.name.empty()) {
      at = path + "." + t.name;
      if (!names.insert(t.name).second) problems.push_back(at + ": name listed twice");
    }
    r.String("dtype", t.dtype);
    if (!t.dtype.empty() && !kDtypes.contains(t.dtype)) {
      problems.push_back(at + ".dtype: \"" + t.dtype +
                         "\" is not one of float32, float16, bfloat16, int32, int64, bool");
    }
    if (const json* shape = r.Find("shape")) {
      if (!shape->is_array()) {
        problems.push_back(at + ".shape: expected a list of sizes and axis names");
      } else {
        for (const json& d : *shape) {
          if (d.is_number_integer() && d.get<int64_t>() >= 0) {
            t.shape.push_back({d.get<int64_t>(), ""});
          } else if (d.is_string() && !d.get<std::string>().empty()) {
            t.shape.push_back({-1, d.get<std::string>()});
          } else {
            problems.push_back(at + ".shape: " + d.dump() +
                               " is neither a size >= 0 nor an axis name");
          }
        }
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

void ReadGraphs(const FieldReader& root, BundleManifest& m) {
  const json& graphs = root.Object("graphs");
  for (const auto& [role, value] : graphs.items()) {
    std::string at = "graphs." + role;
    FieldReader r(value, at, root.problems());
    if (!value.is_object()) {
      root.problems().push_back(at + ": expected an object");
      continue;
    }
    GraphEntry g;
    g.role = role;
    ReadFile(r, "file", g.file);
    r.String("origin", g.origin);
    if (const json* inputs = r.Find("inputs")) {
      g.inputs = ReadSignatures(*inputs, at + ".inputs", root.problems());
    }
    if (const json* outputs = r.Find("outputs")) {
      g.outputs = ReadSignatures(*outputs, at + ".outputs", root.problems());
    }
    m.graphs[role] = std::move(g);
  }
}

void ReadTensors(const FieldReader& root, BundleManifest& m) {
  const json& tensors = root.Object("tensors");
  for (const auto& [name, value] : tensors.items()) {
    std::string at = "tensors." + name;
    FieldReader r(value, at, root.problems());
    TensorEntry t;
    t.name = name;
    ReadFile(r, "file", t.file);
    r.String("dtype", t.dtype);
    if (const json* shape = r.Find("shape")) {
      bool ok = shape->is_array();
      for (const json& d : ok ? *shape : json::array()) {
        ok = ok && d.is_number_integer() && d.get<int64_t>() >= 0;
        if (ok) t.shape.push_back(d.get<int64_t>());
      }
      if (!ok) root.problems().push_back(at + ".shape: expected a list of sizes >= 0");
    }
    m.tensors[name] = std::move(t);
  }
}

void ReadNumbers(const FieldReader& root, BundleManifest& m) {
  {
    FieldReader r(root.Object("audio"), "audio", root.problems());
    r.Integer("prompt_sample_rate", m.audio.prompt_sample_rate);
    r.Integer("sample_rate", m.audio.sample_rate);
    r.Integer("mel_bins", m.audio.mel_bins);
    r.Integer("mel_frame_rate", m.audio.mel_frame_rate);
    r.Integer("samples_per_mel_frame", m.audio.samples_per_mel_frame);
    r.Integer("speaker_embedding_dim", m.audio.speaker_embedding_dim);
    r.Integer("whisper_mel_bins", m.audio.whisper_mel_bins);
    r.Number("prompt_max_seconds", m.audio.prompt_max_seconds, 1, 600);
    if (r.FindOptional("prompt_mel_fmax") != nullptr) {
      r.Number("prompt_mel_fmax", m.audio.prompt_mel_fmax, 1000, 96000);
    }
  }
  {
    FieldReader r(root.Object("tokens"), "tokens", root.problems());
    r.Integer("token_rate", m.tokens.token_rate);
    r.Integer("token_mel_ratio", m.tokens.token_mel_ratio);
  }
  {
    FieldReader r(root.Object("vocab"), "vocab", root.problems());
    r.Integer("text_vocab_size", m.vocab.text_vocab_size);
    r.Integer("speech_token_size", m.vocab.speech_token_size);
    r.Integer("speech_embedding_rows", m.vocab.speech_embedding_rows);
    r.Integer("llm_embedding_rows", m.vocab.llm_embedding_rows, 0);
    r.Integer("head_outputs", m.vocab.head_outputs);
  }
  {
    FieldReader r(root.Object("special_ids"), "special_ids", root.problems());
    r.Integer("sos", m.special_ids.sos, 0);
    r.Integer("task_id", m.special_ids.task_id, 0);
    r.Integer("eos", m.special_ids.eos, 0);
    r.Integer("endofprompt", m.special_ids.endofprompt, 0);
    // Lists of ids >= 0; stop_tokens must be there and not empty, silent_tokens may be absent
    // or empty (CosyVoice2 has none).
    auto ids = [&](const char* name, std::vector<int64_t>& out, bool may_be_empty) {
      const json* list = may_be_empty ? r.FindOptional(name) : r.Find(name);
      if (list == nullptr) return;
      bool ok = list->is_array() && (may_be_empty || !list->empty());
      for (const json& id : ok ? *list : json::array()) {
        ok = ok && id.is_number_integer() && id.get<int64_t>() >= 0;
        if (ok) out.push_back(id.get<int64_t>());
      }
      if (!ok) {
        root.problems().push_back("special_ids." + std::string(name) +
                                  ": expected a list of ids >= 0");
      }
    };
    ids("stop_tokens", m.special_ids.stop_tokens, false);
    ids("silent_tokens", m.special_ids.silent_tokens, true);
  }
  {
    FieldReader r(root.Object("llm"), "llm", root.problems());
    r.Integer("hidden_size", m.llm.hidden_size);
    r.Integer("num_layers", m.llm.num_layers);
    r.Integer("num_attention_heads", m.llm.num_attention_heads);
    r.Integer("num_kv_heads", m.llm.num_kv_heads);
    r.Integer("head_dim", m.llm.head_dim);
    r.Number("rope_theta", m.llm.rope_theta, 1, 1e9);
  }
  {
    FieldReader r(root.Object("sampling"), "sampling", root.problems());
    r.Number("top_p", m.sampling.top_p, 0, 1);
    r.Integer("top_k", m.sampling.top_k);
    r.Integer("win_size", m.sampling.win_size);
    r.Number("tau_r", m.sampling.tau_r, 0, 1);
    r.Number("min_token_text_ratio", m.sampling.min_token_text_ratio, 0, 100);
    r.Number("max_token_text_ratio", m.sampling.max_token_text_ratio, 0, 100);
  }
  {
    FieldReader r(root.Object("flow"), "flow", root.problems());
    r.Integer("n_timesteps", m.flow.n_timesteps);
    r.Number("inference_cfg_rate", m.flow.inference_cfg_rate, 0, 10);
    r.Integer("pre_lookahead_len", m.flow.pre_lookahead_len, 0);
    r.Integer("static_chunk_size", m.flow.static_chunk_size);
  }
  {
    FieldReader r(root.Object("streaming"), "streaming", root.problems());
    r.Integer("token_hop_len", m.streaming.token_hop_len);
    r.Integer("token_max_hop_len", m.streaming.token_max_hop_len);
    r.Integer("stream_scale_factor", m.streaming.stream_scale_factor);
    r.Integer("mel_cache_len", m.streaming.mel_cache_len, 0);
    r.Integer("source_cache_len", m.streaming.source_cache_len, 0);
  }
  {
    FieldReader r(root.Object("hift"), "hift", root.problems());
    r.Integer("n_fft", m.hift.n_fft);
    r.Integer("hop_len", m.hift.hop_len);
    r.Integer("nb_harmonics", m.hift.nb_harmonics);
    r.Integer("upsample_scale", m.hift.upsample_scale);
    r.Number("sine_amp", m.hift.sine_amp, 0, 10);
    r.Number("noise_std", m.hift.noise_std, 0, 10);
    r.Number("voiced_threshold", m.hift.voiced_threshold, 0, 1000);
    r.Number("audio_limit", m.hift.audio_limit, 0, 1);
    if (r.FindOptional("conv_pre_look_right") != nullptr) {
      r.Integer("conv_pre_look_right", m.hift.conv_pre_look_right, 0);
    }
  }
}

// Relations between fields that the runtime relies on.
void CheckConsistency(const BundleManifest& m, std::vector<std::string>& problems) {
  auto require = [&](bool ok, const std::string& message) {
    if (!ok) problems.push_back(message);
  };
  const auto& l = m.llm;
  if (l.num_attention_heads > 0 && l.head_dim > 0 && l.hidden_size > 0) {
    require(l.num_attention_heads * l.head_dim == l.hidden_size,
            "llm.head_dim: num_attention_heads x head_dim (" +
                std::to_string(l.num_attention_heads * l.head_dim) + ") != hidden_size (" +
                std::to_string(l.hidden_size) + ")");
  }
  if (l.num_kv_heads > 0 && l.num_attention_heads > 0) {
    require(l.num_attention_heads % l.num_kv_heads == 0,
            "llm.num_kv_heads: must divide num_attention_heads");
  }
  if (m.audio.mel_frame_rate > 0 && m.tokens.token_rate > 0 && m.tokens.token_mel_ratio > 0) {
    require(m.tokens.token_rate * m.tokens.token_mel_ratio == m.audio.mel_frame_rate,
            "tokens.token_mel_ratio: token_rate x token_mel_ratio != audio.mel_frame_rate");
  }
  if (m.audio.sample_rate > 0) {
    require(2 * m.audio.prompt_mel_fmax <= m.audio.sample_rate,
            "audio.prompt_mel_fmax: above the Nyquist rate of audio.sample_rate");
  }
  if (m.audio.sample_rate > 0 && m.audio.mel_frame_rate > 0 && m.audio.samples_per_mel_frame > 0) {
    require(m.audio.mel_frame_rate * m.audio.samples_per_mel_frame == m.audio.sample_rate,
            "audio.samples_per_mel_frame: mel_frame_rate x samples_per_mel_frame != sample_rate");
  }
  if (m.vocab.speech_token_size > 0) {
    for (int64_t id : m.special_ids.stop_tokens) {
      require(id >= m.vocab.speech_token_size && id < m.vocab.head_outputs,
              "special_ids.stop_tokens: " + std::to_string(id) +
                  " is not in [speech_token_size, head_outputs)");
    }
    for (int64_t id : m.special_ids.silent_tokens) {
      require(id < m.vocab.speech_token_size, "special_ids.silent_tokens: " + std::to_string(id) +
                                                  " is not a speech token (< speech_token_size)");
    }
    require(m.vocab.speech_embedding_rows >= m.vocab.speech_token_size,
            "vocab.speech_embedding_rows: smaller than speech_token_size");
  }
  require(m.special_ids.endofprompt < m.vocab.text_vocab_size || m.vocab.text_vocab_size == 0,
          "special_ids.endofprompt: not below vocab.text_vocab_size");
  require(m.sampling.min_token_text_ratio <= m.sampling.max_token_text_ratio,
          "sampling.min_token_text_ratio: larger than max_token_text_ratio");

  for (const RoleContract& contract : RoleContracts(m.family)) {
    require(contract.optional || m.graphs.contains(std::string(contract.role)),
            "graphs." + std::string(contract.role) + ": missing (a " +
                std::string(FamilyName(m.family)) + " bundle needs it)");
  }
  for (std::string_view name : RequiredTensors(m.family)) {
    require(m.tensors.contains(std::string(name)),
            "tensors." + std::string(name) + ": missing (a " + std::string(FamilyName(m.family)) +
                " bundle needs it)");
  }
  // Signatures against what the C++ stages feed and read, in order.
  for (const RoleContract& contract : RoleContracts(m.family)) {
    const GraphEntry* g = m.graph(contract.role);
    if (g == nullptr) continue;
    auto check = [&](const std::vector<TensorSignature>& have,
                     const std::vector<std::pair<std::string_view, size_t>>& want,
                     const char* side) {
      std::string at = "graphs." + g->role + "." + side;
      bool count_ok =
          contract.variadic_tail ? have.size() >= want.size() : have.size() == want.size();
      if (!count_ok) {
        problems.push_back(at + ": " + std::to_string(have.size()) + " tensors, expected " +
                           (contract.variadic_tail ? "at least " : "") +
                           std::to_string(want.size()));
        return;
      }
      for (size_t i = 0; i < have.size(); ++i) {
        auto [dtype, rank] =
            i < want.size() ? want[i] : std::pair<std::string_view, size_t>{contract.tail_dtype, 4};
        const TensorSignature& t = have[i];
        bool dtype_ok =
            dtype == "int" ? (t.dtype == "int32" || t.dtype == "int64") : t.dtype == dtype;
        if (!dtype_ok) {
          problems.push_back(at + "." + t.name + ": dtype " + t.dtype + ", the runtime needs " +
                             std::string(dtype == "int" ? "int32 or int64" : dtype));
        }
        if (rank != kAnyRank && t.shape.size() != rank) {
          problems.push_back(at + "." + t.name + ": rank " + std::to_string(t.shape.size()) +
                             ", the runtime needs " + std::to_string(rank));
        }
      }
    };
    check(g->inputs, contract.inputs, "inputs");
    check(g->outputs, contract.outputs, "outputs");
    if (contract.variadic_tail && m.llm.num_layers > 0) {
      size_t want_in = contract.inputs.size() + 2 * static_cast<size_t>(m.llm.num_layers);
      size_t want_out = contract.outputs.size() + 2 * static_cast<size_t>(m.llm.num_layers);
      require(g->inputs.size() == want_in && g->outputs.size() == want_out,
              "graphs." + g->role + ": expected " + std::to_string(want_in) + " inputs and " +
                  std::to_string(want_out) + " outputs for llm.num_layers " +
                  std::to_string(m.llm.num_layers) + ", found " + std::to_string(g->inputs.size()) +
                  " and " + std::to_string(g->outputs.size()));
    }
  }
}

}  // namespace

std::string_view FamilyName(Family family) {
  return family == Family::kCosyVoice3 ? "cosyvoice3" : "cosyvoice2";
}

const GraphEntry* BundleManifest::graph(std::string_view role) const {
  auto it = graphs.find(std::string(role));
  return it == graphs.end() ? nullptr : &it->second;
}

const std::vector<RoleContract>& RoleContracts(Family family) {
  // CosyVoice3 declares the same roles (docs/cosyvoice-bundle.md); its DiT estimator keeps the
  // estimator's signature, and its causal HiFT's f0 graph takes a second input, the right context.
  // x, mask, mu, t, spks, cond (upstream's export_onnx.py signature).
  static const std::vector<std::pair<std::string_view, size_t>> kEstimatorInputs = {
      {"float32", 3}, {"float32", 3}, {"float32", 3},
      {"float32", 1}, {"float32", 2}, {"float32", 3}};
  static const std::vector<RoleContract> kCosyVoice2 = {
      {"campplus", {{"float32", 3}}, {{"float32", 2}}},
      // Upstream flattens the tokenizer's output (frontend.py:103): its rank is not relied on.
      {"speech_tokenizer", {{"float32", 3}, {"int32", 1}}, {{"int", kAnyRank}}},
      // The LLM step graph (tools/cosyvoice_export/llm_step_graph.py): inputs_embeds, seqlens_k,
      // total_sequence_length, then the cache; logits, then the cache. float32 is required (the
      // CPU's); float16 and bfloat16 copies are optional (CUDA's).
      {"llm_step", {{"float32", 3}, {"int32", 1}, {"int32", 0}}, {{"float32", 2}}, true},
      {"llm_step_fp16",
       {{"float32", 3}, {"int32", 1}, {"int32", 0}},
       {{"float32", 2}},
       true,
       "float16",
       true},
      {"llm_step_bf16",
       {{"float32", 3}, {"int32", 1}, {"int32", 0}},
       {{"float32", 2}},
       true,
       "bfloat16",
       true},
      {"flow_encoder", {{"int", 2}, {"float32", 2}}, {{"float32", 3}, {"float32", 2}}},
      // The streaming hops' chunk-causal encoder: token [1, N - 3], context [1, 3] (the
      // pre-lookahead tokens), embedding -> mu, spks (tools/cosyvoice_export/graphs.py).
      {"flow_encoder_stream",
       {{"int", 2}, {"int", 2}, {"float32", 2}},
       {{"float32", 3}, {"float32", 2}},
       false,
       "float32",
       true},
      {"flow_estimator", kEstimatorInputs, {{"float32", 3}}},
      // CosyVoice3's DiT with its chunk-masked attention, for the streaming hops: the
      // estimator's signature (tools/cosyvoice_export/graphs.py StreamingEstimator).
      {"flow_estimator_stream", kEstimatorInputs, {{"float32", 3}}, false, "float32", true},
      {"hift_f0", {{"float32", 3}}, {{"float32", 2}}},
      {"hift_decoder", {{"float32", 3}, {"float32", 3}}, {{"float32", 3}, {"float32", 3}}},
  };
  static const std::vector<RoleContract> kCosyVoice3 = [] {
    std::vector<RoleContract> contracts = kCosyVoice2;
    for (RoleContract& c : contracts) {
      if (c.role == "hift_f0") c.inputs = {{"float32", 3}, {"float32", 3}};  // mel, context
    }
    return contracts;
  }();
  return family == Family::kCosyVoice3 ? kCosyVoice3 : kCosyVoice2;
}

std::vector<std::string_view> RequiredTensors(Family family) {
  std::vector<std::string_view> names = {"embed_tokens", "speech_embedding", "rand_noise",
                                         "hift_source_linear_weight", "hift_source_linear_bias"};
  // CosyVoice3 takes sos and task_id from speech_embedding (reference 3.5), and its causal
  // SineGen2 reads a fixed noise table (SineSourceParams::noise_table).
  names.push_back(family == Family::kCosyVoice2 ? "llm_embedding" : "hift_noise_table");
  return names;
}

absl::StatusOr<BundleManifest> ParseBundleManifest(std::string_view json_text,
                                                   const std::string& where) {
  json root = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return core::InvalidArgument(where + ": not valid JSON");
  if (!root.is_object()) return core::InvalidArgument(where + ": expected a JSON object");
  std::vector<std::string> problems;
  FieldReader r(root, "", problems);
  BundleManifest m;
  std::string format;
  r.String("format", format);
  if (!format.empty() && format != kBundleFormat) {
    problems.push_back("format: \"" + format + "\", expected \"" + std::string(kBundleFormat) +
                       "\"");
  }
  r.Integer("format_version", m.format_version);
  if (m.format_version > 0 && m.format_version < kBundleFormatVersion) {
    problems.push_back("format_version: " + std::to_string(m.format_version) +
                       " is a bundle made before voxserve's GroupQueryAttention LLM graph (this "
                       "voxserve reads format " +
                       std::to_string(kBundleFormatVersion) +
                       "): remake it with tools/cosyvoice_export/export.py --model-dir "
                       "<CosyVoice2-0.5B dir> --out <bundle> (docs/cosyvoice-bundle.md)");
  }
  if (m.format_version > kBundleFormatVersion) {
    problems.push_back("format_version: " + std::to_string(m.format_version) +
                       " is newer than this voxserve reads (" +
                       std::to_string(kBundleFormatVersion) + ")");
  }
  std::string family;
  r.String("family", family);
  if (family == "cosyvoice3") {
    m.family = Family::kCosyVoice3;
  } else if (!family.empty() && family != "cosyvoice2") {
    problems.push_back("family: \"" + family + "\" is not one of cosyvoice2, cosyvoice3");
  }
  FieldReader(r.Object("source"), "source", problems).String("kind", m.source_kind);
  ReadNumbers(r, m);
  ReadGraphs(r, m);
  ReadTensors(r, m);
  {
    FieldReader t(r.Object("tokenizer"), "tokenizer", problems);
    ReadFile(t, "dir", m.tokenizer_dir);
    if (const json* files = t.Find("files")) {
      bool ok = files->is_array() && !files->empty();
      for (const json& f : ok ? *files : json::array()) {
        ok = ok && f.is_string() && IsBundlePath(f.get<std::string>());
        if (ok) m.tokenizer_files.push_back(f.get<std::string>());
      }
      if (!ok) problems.push_back("tokenizer.files: expected a list of relative file names");
    }
  }
  if (root.contains("goldens")) {
    ReadFile(FieldReader(r.Object("goldens"), "goldens", problems), "index", m.goldens_index);
  }
  if (problems.empty()) CheckConsistency(m, problems);
  if (!problems.empty()) {
    return core::InvalidArgument(where + ": " + std::to_string(problems.size()) +
                                 " problem(s):\n  " + absl::StrJoin(problems, "\n  "));
  }
  return m;
}

absl::StatusOr<BundleManifest> LoadBundleManifest(const std::string& dir) {
  std::string path = (std::filesystem::path(dir) / "manifest.json").string();
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) {
    return core::NotFound("bundle " + dir + ": not a directory");
  }
  auto text = core::ReadFile(path);
  if (!text) return core::NotFound("bundle " + dir + ": manifest.json missing or unreadable");
  return ParseBundleManifest(*text, path);
}

}  // namespace voxserve::engine::cosyvoice
