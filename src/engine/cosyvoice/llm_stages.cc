// verify-bundle's `llm.greedy` stage: the whole C++ decode loop (LlmEmbeddings' prefill input,
// LlmDecoder's cache and steps, log_softmax, greedy sampling with ignore_eos, stop ids, min/max
// length) against upstream's own Qwen2LM.inference run with argmax sampling (goldens.py).
#include <algorithm>
#include <memory>

#include "core/error.h"
#include "engine/cosyvoice/bundle_verifier.h"
#include "engine/cosyvoice/llm_decoder.h"

namespace voxserve::engine::cosyvoice {
namespace {

absl::StatusOr<std::vector<int64_t>> Ids(const GoldenStage& g, const std::string& key) {
  auto array = g.Input(key);
  if (!array.ok()) return array.status();
  return array->ints;
}

// A decoder per golden, sized to it: the attention runs over every cache slot, so a larger
// capacity than the sequence needs only costs time.
absl::StatusOr<double> GreedyDecodeError(const BundleManifest& m, const std::string& dir,
                                         const GoldenStage& g) {
  LlmRequest request;
  request.greedy = true;
  for (auto [key, ids] : {std::pair{"text_ids", &request.text_ids},
                          {"prompt_text_ids", &request.prompt_text_ids},
                          {"prompt_speech_tokens", &request.prompt_speech_tokens}}) {
    auto read = Ids(g, key);
    if (!read.ok()) return read.status();
    *ids = std::move(*read);
  }
  LlmDecoderConfig config;
  config.max_active = 1;
  config.capacity = static_cast<int>(2 + request.prompt_text_ids.size() + request.text_ids.size() +
                                     request.prompt_speech_tokens.size() +
                                     LimitsFor(m.sampling, request.text_ids.size()).max_len);
  config.session.intra_op_threads = 1;
  auto created = LlmDecoder::Create(m, dir, config);
  if (!created.ok()) return created.status();
  LlmDecoder& decoder = **created;
  auto want_logp = g.Output("logp");
  if (!want_logp.ok()) return want_logp.status();
  const size_t steps = static_cast<size_t>(want_logp->shape.at(0));
  std::vector<float> logp;
  decoder.SetLogpHook([&](uint64_t, std::span<float> row) {
    if (logp.size() < want_logp->floats.size()) logp.insert(logp.end(), row.begin(), row.end());
  });
  constexpr uint64_t kSeq = 1;
  if (absl::Status status = decoder.Admit(kSeq, std::move(request)); !status.ok()) return status;
  std::vector<float> tokens;
  bool finished = false;
  while (!finished) {
    auto events = decoder.Step();
    if (!events.ok()) return events.status();
    if (events->empty()) return core::Internal(g.name + ": the decoder stopped without finishing");
    for (const LlmEvent& e : *events) {
      if (e.token >= 0) tokens.push_back(static_cast<float>(e.token));
      finished = finished || e.finish != LlmFinish::kNone;
    }
  }
  if (logp.size() != steps * want_logp->shape.at(1)) {
    return core::InvalidArgument(g.name + ": " + std::to_string(logp.size()) +
                                 " logp values, the golden has " +
                                 std::to_string(want_logp->floats.size()));
  }
  auto logp_error = MaxAbsError(logp, *want_logp, g.name + " logp");
  if (!logp_error.ok()) return logp_error.status();
  auto want_tokens = g.Output("tokens");
  if (!want_tokens.ok()) return want_tokens.status();
  auto token_error = MaxAbsError(tokens, *want_tokens, g.name + " tokens");
  if (!token_error.ok()) return token_error.status();
  return std::max(*logp_error, *token_error);
}

}  // namespace

absl::Status AddLlmStages(BundleVerifier& v) {
  if (v.manifest().family != Family::kCosyVoice2) return absl::OkStatus();  // CV2 only for now
  v.AddStage("llm.greedy", [&m = v.manifest(), dir = v.bundle_dir()](const GoldenStage& g) {
    return GreedyDecodeError(m, dir, g);
  });
  return absl::OkStatus();
}

}  // namespace voxserve::engine::cosyvoice
