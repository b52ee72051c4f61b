// The verify-bundle stages of the ONNX half: PromptEncoder's two graphs, and each exported graph
// run alone on its golden inputs (a check of the export itself; the C++ stages around them —
// Euler loop, SineGen, iSTFT, the decode loop — arrive with part 2 and register their own).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>

#include "core/error.h"
#include "engine/cosyvoice/bundle_verifier.h"
#include "engine/cosyvoice/llm_step_graph.h"
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

// log_softmax of logits against the golden "logp".
absl::StatusOr<double> LogpError(std::vector<float> logp, const GoldenStage& golden) {
  double top = *std::max_element(logp.begin(), logp.end());
  double sum = 0;
  for (float x : logp) sum += std::exp(x - top);
  for (float& x : logp) x = static_cast<float>(x - top - std::log(sum));
  auto want = golden.Output("logp");
  if (!want.ok()) return want.status();
  return MaxAbsError(logp, *want, golden.name + " logp");
}

// llm.prefill and llm.decode: the step graph alone on the goldens' embeddings (its own check of
// the export, before the decode loop's stage llm.greedy). A one-row cache just larger than the
// prompt: the prompt goes into slots 0 .. S - 1, then (decode) the next input into slot S.
absl::StatusOr<double> LlmStepStage(const BundleManifest& m, const std::string& dir,
                                    const LlmStepGraphConfig& base, const GoldenStage& golden,
                                    bool decode) {
  auto prefill = golden.Input(decode ? "prefill_inputs_embeds" : "inputs_embeds");
  if (!prefill.ok()) return prefill.status();
  const int64_t s = prefill->shape.at(1);
  LlmStepGraphConfig config = base;
  config.rows = 1;
  config.capacity = static_cast<int>(s + 2);
  auto graph = LlmStepGraph::Create(m, dir, config);
  if (!graph.ok()) return graph.status();
  std::vector<float> logits(static_cast<size_t>(m.vocab.head_outputs));
  onnx::HostTraffic traffic;
  if (absl::Status st = (*graph)->Prefill(0, prefill->floats, logits, traffic); !st.ok()) {
    return st;
  }
  if (!decode) return LogpError(std::move(logits), golden);
  auto embeds = golden.Input("inputs_embeds");
  if (!embeds.ok()) return embeds.status();
  const int32_t length[] = {static_cast<int32_t>(s)};
  if (absl::Status st = (*graph)->Decode(embeds->floats, length, logits, traffic); !st.ok()) {
    return st;
  }
  return LogpError(std::move(logits), golden);
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
  // Optional roles (older bundles and CosyVoice2 lack them, and then their goldens lack the
  // stages too).
  for (auto [prefix, role] : {std::pair{"flow.stream_encoder", "flow_encoder_stream"},
                              {"flow.estimator_stream", "flow_estimator_stream"}}) {
    if (v.manifest().graph(role) == nullptr) continue;
    auto session = Open(v, role);
    if (!session.ok()) return session.status();
    v.AddStage(prefix, [s = *session](const GoldenStage& g) { return RunGraphStage(*s, g); });
  }
  LlmStepGraphConfig llm;
  llm.runtime.precision = v.llm_precision();
  llm.session = config;
  auto precision = LlmStepGraph::ResolvePrecision(v.manifest(), llm);
  if (!precision.ok()) return precision.status();
  const double atol = LlmStepGraph::LogpTolerance(*precision);
  for (bool decode : {false, true}) {
    v.AddStage(
        decode ? "llm.decode" : "llm.prefill",
        [&m = v.manifest(), dir = v.bundle_dir(), llm, decode](const GoldenStage& g) {
          return LlmStepStage(m, dir, llm, g, decode);
        },
        atol);
  }
  return absl::OkStatus();
}

}  // namespace voxserve::engine::cosyvoice
