// The verify-bundle stages of the ONNX half: PromptEncoder's two graphs, and each exported graph
// run alone on its golden inputs (a check of the export itself; the C++ stages around them —
// Euler loop, SineGen, iSTFT, the decode loop — arrive with part 2 and register their own).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>

#include "core/error.h"
#include "engine/cosyvoice/bundle_verifier.h"
#include "engine/cosyvoice/prompt_encoder.h"
#include "engine/onnx/onnx_session.h"

namespace voxserve::engine::cosyvoice {
namespace {

using onnx::ElementType;
using onnx::OnnxSession;
using onnx::Tensor;

// A golden array as the graph input `spec` wants it: its element type, and its rank (leading
// unit axes added, e.g. an x-vector [192] for an input [1, 192]).
absl::StatusOr<Tensor> AsInput(const NpyArray& golden, const onnx::TensorSpec& spec) {
  std::vector<int64_t> shape = golden.shape;
  while (shape.size() < spec.shape.size()) shape.insert(shape.begin(), 1);
  if (shape.size() != spec.shape.size()) {
    return core::InvalidArgument("golden " + ShapeString(golden.shape) + " for input '" +
                                 spec.name + "' of rank " + std::to_string(spec.shape.size()));
  }
  switch (spec.type) {
    case ElementType::kFloat:
      if (golden.dtype != "float32") {
        return Tensor::Floats(shape, std::vector<float>(golden.ints.begin(), golden.ints.end()));
      }
      return Tensor::Floats(shape, golden.floats);
    case ElementType::kInt64:
      return Tensor::Int64s(shape, golden.ints);
    case ElementType::kInt32:
      return Tensor::Int32s(shape, std::vector<int32_t>(golden.ints.begin(), golden.ints.end()));
    default:
      return core::InvalidArgument("input '" + spec.name + "' has an unsupported element type");
  }
}

absl::StatusOr<std::shared_ptr<OnnxSession>> Open(const BundleVerifier& v, std::string_view role) {
  const GraphEntry* g = v.manifest().graph(role);
  if (g == nullptr) return core::NotFound("no graph " + std::string(role));
  const onnx::OnnxSessionConfig& config = v.session_config();
  auto session =
      OnnxSession::Create((std::filesystem::path(v.bundle_dir()) / g->file).string(), config);
  if (!session.ok()) return session.status();
  return std::shared_ptr<OnnxSession>(std::move(*session));
}

// Feeds every graph input from the golden input of the same name (extra feeds via `extra`),
// and compares every golden output named like a graph output.
absl::StatusOr<double> RunGraphStage(const OnnxSession& session, const GoldenStage& golden,
                                     std::vector<std::pair<std::string, Tensor>> feeds = {},
                                     std::vector<Tensor>* outputs_out = nullptr) {
  for (const onnx::TensorSpec& spec : session.inputs()) {
    bool fed = std::any_of(feeds.begin(), feeds.end(),
                           [&](const auto& f) { return f.first == spec.name; });
    if (fed) continue;
    auto array = golden.Input(spec.name);
    if (!array.ok()) return array.status();
    auto tensor = AsInput(*array, spec);
    if (!tensor.ok()) return tensor.status();
    feeds.emplace_back(spec.name, std::move(*tensor));
  }
  auto outputs = session.Run(feeds);
  if (!outputs.ok()) return outputs.status();
  double worst = 0;
  bool compared = false;
  for (size_t i = 0; i < session.outputs().size(); ++i) {
    const std::string& name = session.outputs()[i].name;
    if (!golden.outputs.contains(name)) continue;
    auto want = golden.Output(name);
    if (!want.ok()) return want.status();
    auto error = MaxAbsError(outputs->at(i).ToFloats(), *want, golden.name + " " + name);
    if (!error.ok()) return error.status();
    worst = std::max(worst, *error);
    compared = true;
  }
  if (!compared) return core::InvalidArgument(golden.name + ": no golden output to compare");
  if (outputs_out != nullptr) *outputs_out = std::move(*outputs);
  return worst;
}

absl::StatusOr<double> LogpError(const OnnxSession& head, const BundleManifest& m,
                                 const std::vector<float>& hidden, const GoldenStage& golden);

// llm.prefill: the backbone over the whole prompt, with a one-slot cache masked out (exercises
// the preallocated-cache layout of docs/cosyvoice-bundle.md), then the head and log_softmax on
// the last position.
absl::StatusOr<double> LlmPrefill(const OnnxSession& backbone, const OnnxSession& head,
                                  const BundleManifest& m, const GoldenStage& golden) {
  auto embeds = golden.Input("inputs_embeds");
  auto mask = golden.Input("attention_mask");
  if (!embeds.ok()) return embeds.status();
  if (!mask.ok()) return mask.status();
  int64_t s = embeds->shape.at(1);
  std::vector<float> padded;  // [1, S, 1 + S]: slot 0 is the unused cache slot
  for (int64_t i = 0; i < s; ++i) {
    padded.push_back(0.0f);
    padded.insert(padded.end(), mask->floats.begin() + i * s, mask->floats.begin() + (i + 1) * s);
  }
  std::vector<std::pair<std::string, Tensor>> feeds;
  feeds.emplace_back("attention_mask", Tensor::Floats({1, s, 1 + s}, std::move(padded)));
  for (int layer = 0; layer < m.llm.num_layers; ++layer) {
    for (const char* kind : {"key", "value"}) {
      std::vector<float> zeros(static_cast<size_t>(m.llm.num_kv_heads * m.llm.head_dim), 0.0f);
      feeds.emplace_back("past_" + std::string(kind) + "_" + std::to_string(layer),
                         Tensor::Floats({1, m.llm.num_kv_heads, 1, m.llm.head_dim}, zeros));
    }
  }
  std::vector<Tensor> outputs;
  auto hidden_error = RunGraphStage(backbone, golden, std::move(feeds), &outputs);
  if (!hidden_error.ok()) return hidden_error.status();
  auto logp_error = LogpError(head, m, outputs.at(0).ToFloats(), golden);
  if (!logp_error.ok()) return logp_error.status();
  return std::max(*hidden_error, *logp_error);
}

// log_softmax(head(hidden of the last position)) against the golden "logp".
absl::StatusOr<double> LogpError(const OnnxSession& head, const BundleManifest& m,
                                 const std::vector<float>& hidden, const GoldenStage& golden) {
  std::vector<float> last(hidden.end() - m.llm.hidden_size, hidden.end());
  auto logits = head.Run(
      {{head.inputs().at(0).name, Tensor::Floats({1, m.llm.hidden_size}, std::move(last))}});
  if (!logits.ok()) return logits.status();
  std::vector<float> logp = logits->at(0).ToFloats();
  double top = *std::max_element(logp.begin(), logp.end());
  double sum = 0;
  for (float x : logp) sum += std::exp(x - top);
  for (float& x : logp) x = static_cast<float>(x - top - std::log(sum));
  auto want = golden.Output("logp");
  if (!want.ok()) return want.status();
  return MaxAbsError(logp, *want, golden.name + " logp");
}

// llm.decode: prefill into a preallocated cache of capacity S + 2 (rows stored at slots 1..S,
// slots 0 and S + 1 free and masked), then one decode step over that cache, as part 2's decode
// loop will run it (docs/cosyvoice-bundle.md, "The LLM's KV cache layout").
absl::StatusOr<double> LlmDecode(const OnnxSession& backbone, const OnnxSession& head,
                                 const BundleManifest& m, const GoldenStage& golden) {
  auto prefill = golden.Input("prefill_inputs_embeds");
  if (!prefill.ok()) return prefill.status();
  const int64_t s = prefill->shape.at(1), cap = s + 2, kv = m.llm.num_kv_heads, d = m.llm.head_dim;
  std::vector<std::vector<float>> cache(2 * static_cast<size_t>(m.llm.num_layers),
                                        std::vector<float>(static_cast<size_t>(kv * cap * d)));
  auto feeds_with_cache = [&](std::vector<std::pair<std::string, Tensor>> feeds) {
    for (int layer = 0; layer < m.llm.num_layers; ++layer) {
      for (int kind = 0; kind < 2; ++kind) {
        feeds.emplace_back((kind == 0 ? "past_key_" : "past_value_") + std::to_string(layer),
                           Tensor::Floats({1, kv, cap, d}, cache[2 * layer + kind]));
      }
    }
    return feeds;
  };
  std::vector<float> mask(static_cast<size_t>(s * (cap + s)), 0.0f);  // no cached slot yet
  for (int64_t i = 0; i < s; ++i) {
    for (int64_t j = 0; j <= i; ++j) mask[i * (cap + s) + cap + j] = 1.0f;
  }
  std::vector<int64_t> positions(static_cast<size_t>(s));
  for (int64_t i = 0; i < s; ++i) positions[i] = i;
  auto first = backbone.Run(feeds_with_cache(
      {{"inputs_embeds", Tensor::Floats({1, s, m.llm.hidden_size}, prefill->floats)},
       {"position_ids", Tensor::Int64s({1, s}, positions)},
       {"attention_mask", Tensor::Floats({1, s, cap + s}, mask)}}));
  if (!first.ok()) return first.status();
  for (size_t i = 0; i + 1 < first->size(); ++i) {  // new_key_0, new_value_0, ... after hidden
    std::vector<float> fresh = first->at(i + 1).ToFloats();  // [1, kv, S, D]
    for (int64_t h = 0; h < kv; ++h) {
      for (int64_t t = 0; t < s; ++t) {
        std::copy_n(fresh.begin() + (h * s + t) * d, d, cache[i].begin() + (h * cap + 1 + t) * d);
      }
    }
  }
  std::vector<float> step_mask(static_cast<size_t>(cap + 1), 0.0f);
  for (int64_t j = 1; j <= s; ++j) step_mask[j] = 1.0f;
  step_mask[cap] = 1.0f;  // the new position itself
  auto embeds = golden.Input("inputs_embeds");
  if (!embeds.ok()) return embeds.status();
  auto step = backbone.Run(feeds_with_cache(
      {{"inputs_embeds", Tensor::Floats({1, 1, m.llm.hidden_size}, embeds->floats)},
       {"position_ids", Tensor::Int64s({1, 1}, {s})},
       {"attention_mask", Tensor::Floats({1, 1, cap + 1}, step_mask)}}));
  if (!step.ok()) return step.status();
  std::vector<float> hidden = step->at(0).ToFloats();
  auto want = golden.Output("hidden_states");
  if (!want.ok()) return want.status();
  auto hidden_error = MaxAbsError(hidden, *want, golden.name + " hidden_states");
  if (!hidden_error.ok()) return hidden_error.status();
  auto logp_error = LogpError(head, m, hidden, golden);
  if (!logp_error.ok()) return logp_error.status();
  return std::max(*hidden_error, *logp_error);
}

}  // namespace

absl::Status AddOnnxStages(BundleVerifier& v) {
  const onnx::OnnxSessionConfig& config = v.session_config();
  auto encoder = PromptEncoder::Create(v.manifest(), v.bundle_dir(), config);
  if (!encoder.ok()) return encoder.status();
  std::shared_ptr<PromptEncoder> prompt(std::move(*encoder));
  v.AddStage("campplus", [prompt](const GoldenStage& g) -> absl::StatusOr<double> {
    auto fbank = g.Input("fbank");
    if (!fbank.ok()) return fbank.status();
    auto embedding = prompt->SpeakerEmbedding(fbank->floats);
    if (!embedding.ok()) return embedding.status();
    auto want = g.Output("embedding");
    if (!want.ok()) return want.status();
    return MaxAbsError(*embedding, *want, "campplus embedding");
  });
  v.AddStage("speech_tokenizer", [prompt](const GoldenStage& g) -> absl::StatusOr<double> {
    auto logmel = g.Input("logmel");
    if (!logmel.ok()) return logmel.status();
    auto tokens = prompt->SpeechTokens(logmel->floats);
    if (!tokens.ok()) return tokens.status();
    auto want = g.Output("tokens");
    if (!want.ok()) return want.status();
    return MaxAbsError(std::vector<float>(tokens->begin(), tokens->end()), *want, "speech tokens");
  });
  for (auto [prefix, role] : {std::pair{"flow.encoder", "flow_encoder"},
                              {"flow.estimator", "flow_estimator"},
                              {"hift.f0", "hift_f0"},
                              {"hift.decoder", "hift_decoder"}}) {
    auto session = Open(v, role);
    if (!session.ok()) return session.status();
    v.AddStage(prefix, [s = *session](const GoldenStage& g) { return RunGraphStage(*s, g); });
  }
  // Optional role (older bundles lack it, and then their goldens lack the stage too).
  if (v.manifest().graph("flow_encoder_stream") != nullptr) {
    auto session = Open(v, "flow_encoder_stream");
    if (!session.ok()) return session.status();
    v.AddStage("flow.stream_encoder",
               [s = *session](const GoldenStage& g) { return RunGraphStage(*s, g); });
  }
  auto backbone = Open(v, "llm_backbone");
  if (!backbone.ok()) return backbone.status();
  auto head = Open(v, "llm_decoder");
  if (!head.ok()) return head.status();
  v.AddStage("llm.prefill", [b = *backbone, h = *head, &m = v.manifest()](const GoldenStage& g) {
    return LlmPrefill(*b, *h, m, g);
  });
  v.AddStage("llm.decode", [b = *backbone, h = *head, &m = v.manifest()](const GoldenStage& g) {
    return LlmDecode(*b, *h, m, g);
  });
  return absl::OkStatus();
}

}  // namespace voxserve::engine::cosyvoice
