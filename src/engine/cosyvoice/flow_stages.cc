// The verify-bundle stages of the flow (flow_matcher.h): flow.full/N, the whole flow on the golden
// tokens, prompt and x-vector against upstream's flow.inference (10 Euler steps, the bundle's
// noise), and flow.stream/N, its streaming hops (RunPrefix). flow.encoder, flow.stream_encoder
// and flow.estimator, the graphs run alone, are onnx_stages.cc's.
#include <memory>
#include <utility>
#include <vector>

#include "core/error.h"
#include "engine/cosyvoice/bundle_verifier.h"
#include "engine/cosyvoice/flow_matcher.h"

namespace voxserve::engine::cosyvoice {
namespace {

absl::StatusOr<std::vector<int32_t>> Ids(const GoldenStage& g, const std::string& key) {
  auto array = g.Input(key);
  if (!array.ok()) return array.status();
  if (array->dtype == "float32") return core::InvalidArgument(g.name + ": '" + key + "' is float");
  return std::vector<int32_t>(array->ints.begin(), array->ints.end());
}

// A golden's flow inputs, owned here (FlowRequest only views them).
struct GoldenFlowInputs {
  std::vector<int32_t> tokens, prompt_tokens;
  std::vector<float> prompt_mel, embedding;
  FlowRequest request() const { return {tokens, prompt_tokens, prompt_mel, embedding}; }
};

absl::StatusOr<GoldenFlowInputs> FlowInputs(const GoldenStage& g) {
  auto tokens = Ids(g, "token");
  if (!tokens.ok()) return tokens.status();
  auto prompt_tokens = Ids(g, "prompt_token");
  if (!prompt_tokens.ok()) return prompt_tokens.status();
  auto prompt_mel = g.Input("prompt_mel");
  if (!prompt_mel.ok()) return prompt_mel.status();
  auto embedding = g.Input("embedding");
  if (!embedding.ok()) return embedding.status();
  return GoldenFlowInputs{*std::move(tokens), *std::move(prompt_tokens),
                          std::move(prompt_mel->floats), std::move(embedding->floats)};
}

absl::StatusOr<double> FlowFull(const FlowMatcher& flow, const GoldenStage& g) {
  auto inputs = FlowInputs(g);
  if (!inputs.ok()) return inputs.status();
  auto mel = flow.Run(inputs->request());
  if (!mel.ok()) return mel.status();
  auto want = g.Output("mel");
  if (!want.ok()) return want.status();
  return MaxAbsError(mel->values, *want, g.name + " mel");
}

// flow.stream/N: one streaming hop (FlowMatcher::RunPrefix) against upstream's
// flow.inference(streaming=True, finalize=False) on a prefix, or finalize=True on the whole
// sequence, sliced from 2 x token_offset as token2wav does (goldens.py _flow_stream).
absl::StatusOr<double> FlowStream(const FlowMatcher& flow, const GoldenStage& g) {
  auto finalize = Ids(g, "finalize");
  if (!finalize.ok()) return finalize.status();
  auto offset = Ids(g, "token_offset");
  if (!offset.ok()) return offset.status();
  if (finalize->size() != 1 || offset->size() != 1 || offset->front() < 0) {
    return core::InvalidArgument(g.name + ": finalize and token_offset must be one value each");
  }
  if (finalize->front() == 0 && !flow.has_stream_encoder()) {
    return absl::FailedPreconditionError(
        "the bundle has no flow_encoder_stream graph: streaming hops run the non-streaming "
        "encoder over the prefix (an approximation of upstream's chunk-causal encoder)");
  }
  auto inputs = FlowInputs(g);
  if (!inputs.ok()) return inputs.status();
  auto mel = flow.RunPrefix(inputs->request(), static_cast<size_t>(offset->front()),
                            finalize->front() != 0);
  if (!mel.ok()) return mel.status();
  auto want = g.Output("mel");
  if (!want.ok()) return want.status();
  return MaxAbsError(mel->values, *want, g.name + " mel");
}

}  // namespace

absl::Status AddFlowStages(BundleVerifier& v) {
  auto flow = FlowMatcher::Create(v.manifest(), v.bundle_dir(), v.session_config());
  if (!flow.ok()) return flow.status();
  std::shared_ptr<FlowMatcher> shared(std::move(*flow));
  v.AddStage("flow.full", [shared](const GoldenStage& g) { return FlowFull(*shared, g); });
  v.AddStage("flow.stream", [shared](const GoldenStage& g) { return FlowStream(*shared, g); });
  return absl::OkStatus();
}

}  // namespace voxserve::engine::cosyvoice
