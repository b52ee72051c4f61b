// verify-bundle's LLM stages: `llm.greedy`, the whole C++ decode loop (LlmEmbeddings' prefill
// input, LlmDecoder's cache and steps, log_softmax, greedy sampling with ignore_eos, stop ids,
// min/max length) against upstream's own Qwen2LM.inference run with argmax sampling; `llm.ras`,
// RasSample against upstream's sampling_ids/ras_sampling on crafted logits (goldens.py).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "core/error.h"
#include "engine/cosyvoice/bundle_verifier.h"
#include "engine/cosyvoice/llm_decoder.h"
#include "spdlog/spdlog.h"

namespace voxserve::engine::cosyvoice {
namespace {

absl::StatusOr<std::vector<int64_t>> Ids(const GoldenStage& g, const std::string& key) {
  auto array = g.Input(key);
  if (!array.ok()) return array.status();
  return array->ints;
}

// A decoder per golden, sized to it. In float32 every token must equal upstream's; a half-precision
// graph may take another token where upstream's top two are within its stated tolerance (a near
// tie its rounding can flip): the run is compared up to that first divergence, which must be such
// a tie (its margin in our log-probabilities is the error then), and the logp of the steps before
// it against the goldens.
absl::StatusOr<double> GreedyDecodeError(const BundleManifest& m, const std::string& dir,
                                         const onnx::OnnxSessionConfig& session,
                                         const std::string& precision, const GoldenStage& g) {
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
  config.runtime.precision = precision;
  config.session = session;
  auto created = LlmDecoder::Create(m, dir, config);
  if (!created.ok()) return created.status();
  LlmDecoder& decoder = **created;
  auto want_logp = g.Output("logp");
  if (!want_logp.ok()) return want_logp.status();
  auto want_tokens = g.Output("tokens");
  if (!want_tokens.ok()) return want_tokens.status();
  // Upstream's tokens, whichever way the golden stores them.
  std::vector<int64_t> want = want_tokens->ints;
  if (want.empty()) want.assign(want_tokens->floats.begin(), want_tokens->floats.end());
  const size_t steps = static_cast<size_t>(want_logp->shape.at(0));
  std::vector<float> logp, current;
  decoder.SetLogpHook([&](uint64_t, std::span<float> row) {
    if (logp.size() < want_logp->floats.size()) logp.insert(logp.end(), row.begin(), row.end());
    current.assign(row.begin(), row.end());
  });
  constexpr uint64_t kSeq = 1;
  if (absl::Status status = decoder.Admit(kSeq, std::move(request)); !status.ok()) return status;
  std::vector<float> tokens;
  bool finished = false;
  double tie_margin = -1;  // >= 0: the first divergence, a half-precision run's
  while (!finished && tie_margin < 0) {
    auto events = decoder.Step();
    if (!events.ok()) return events.status();
    if (events->empty()) return core::Internal(g.name + ": the decoder stopped without finishing");
    for (const LlmEvent& e : *events) {
      const size_t k = tokens.size();
      if (precision != "fp32" && (k >= want.size() || e.token < 0 || want[k] != e.token)) {
        if (k >= want.size() && e.token < 0) {  // both stop here
          finished = true;
          break;
        }
        // Upstream's choice at step k: its token, or (its run ended) the likeliest stop id.
        float theirs = -std::numeric_limits<float>::infinity();
        if (k < want.size()) {
          theirs = current.at(static_cast<size_t>(want[k]));
        } else {
          for (int64_t stop : m.special_ids.stop_tokens)
            theirs = std::max(theirs, current.at(stop));
        }
        float ours = -std::numeric_limits<float>::infinity();
        if (e.token >= 0) {
          ours = current.at(static_cast<size_t>(e.token));
        } else {
          for (int64_t stop : m.special_ids.stop_tokens) ours = std::max(ours, current.at(stop));
        }
        tie_margin = std::fabs(static_cast<double>(ours) - theirs);
        logp.resize(std::min(logp.size(), k * static_cast<size_t>(want_logp->shape.at(1))));
        break;
      }
      if (e.token >= 0) tokens.push_back(static_cast<float>(e.token));
      finished = finished || e.finish != LlmFinish::kNone;
    }
  }
  if (precision != "fp32") {
    spdlog::info(
        "{} ({}): {} of upstream's {} tokens equal{}", g.name, precision, tokens.size(),
        want.size(),
        tie_margin >= 0 ? ", then a near tie (margin " + std::to_string(tie_margin) + ")" : "");
  }
  const size_t compared = logp.size();
  NpyArray prefix = *want_logp;
  prefix.floats.resize(std::min(compared, prefix.floats.size()));
  if (tie_margin < 0 && compared != steps * want_logp->shape.at(1)) {
    return core::InvalidArgument(g.name + ": " + std::to_string(compared) +
                                 " logp values, the golden has " +
                                 std::to_string(want_logp->floats.size()));
  }
  auto logp_error = MaxAbsError(logp, prefix, g.name + " logp");
  if (!logp_error.ok()) return logp_error.status();
  if (tie_margin >= 0) return std::max(*logp_error, tie_margin);
  auto token_error = MaxAbsError(tokens, *want_tokens, g.name + " tokens");
  if (!token_error.ok()) return token_error.status();
  return std::max(*logp_error, *token_error);
}

// llm.ras: RasSample on each crafted case with upstream's injected draws; the error counts the
// cases whose token, nucleus size or repetition branch differ from upstream's (tolerance 0).
absl::StatusOr<double> RasCasesError(const BundleManifest& m, const GoldenStage& g) {
  auto logp = g.Input("logp");
  auto decoded = g.Input("decoded");
  auto ignore = g.Input("ignore_eos");
  auto draws = g.Input("draws");
  auto tokens = g.Output("tokens");
  auto sizes = g.Output("nucleus_size");
  auto branches = g.Output("repetition");
  for (const auto* a : {&logp, &decoded, &ignore, &draws, &tokens, &sizes, &branches}) {
    if (!a->ok()) return a->status();
  }
  const size_t cases = static_cast<size_t>(logp->shape.at(0));
  const size_t vocab = static_cast<size_t>(logp->shape.at(1));
  const size_t window = static_cast<size_t>(decoded->shape.at(1));
  if (tokens->ints.size() != cases || draws->floats.size() != 2 * cases ||
      decoded->ints.size() != cases * window || ignore->ints.size() != cases) {
    return core::InvalidArgument(g.name + ": inconsistent case counts");
  }
  const auto& s = m.sampling;
  RasConfig config{s.top_p, s.top_k, s.win_size, s.tau_r, m.special_ids.eos};
  double mismatches = 0;
  for (size_t c = 0; c < cases; ++c) {
    std::vector<float> scores(logp->floats.begin() + c * vocab,
                              logp->floats.begin() + (c + 1) * vocab);
    std::vector<int64_t> history;
    for (size_t j = 0; j < window; ++j) {
      if (int64_t t = decoded->ints[c * window + j]; t >= 0) history.push_back(t);
    }
    size_t next = 0;
    auto uniform = [&] {
      return static_cast<double>(draws->floats[2 * c + std::min<size_t>(next++, 1)]);
    };
    RasDecision d = RasSample(std::move(scores), history, ignore->ints[c] != 0, config, uniform);
    bool same = d.token == tokens->ints[c] &&
                static_cast<int64_t>(d.nucleus_size) == sizes->ints[c] &&
                (d.repetition_branch ? 1 : 0) == branches->ints[c];
    mismatches += same ? 0 : 1;
  }
  return mismatches;
}

}  // namespace

absl::Status AddLlmStages(BundleVerifier& v) {
  if (v.manifest().family != Family::kCosyVoice2) return absl::OkStatus();  // CV2 only for now
  LlmStepGraphConfig llm;
  llm.runtime.precision = v.llm_precision();
  llm.session = v.session_config();
  auto precision = LlmStepGraph::ResolvePrecision(v.manifest(), llm);
  if (!precision.ok()) return precision.status();
  v.AddStage(
      "llm.greedy",
      [&m = v.manifest(), dir = v.bundle_dir(), session = v.session_config(),
       precision = *precision](const GoldenStage& g) {
        return GreedyDecodeError(m, dir, session, precision, g);
      },
      LlmStepGraph::LogpTolerance(*precision));
  v.AddStage("llm.ras", [&m = v.manifest()](const GoldenStage& g) { return RasCasesError(m, g); });
  return absl::OkStatus();
}

}  // namespace voxserve::engine::cosyvoice
