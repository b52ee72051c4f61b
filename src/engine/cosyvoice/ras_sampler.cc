#include "engine/cosyvoice/ras_sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace voxserve::engine::cosyvoice {

std::vector<float> Softmax(std::span<const float> logp) {
  std::vector<float> p(logp.size(), 0.0f);
  if (logp.empty()) return p;
  float top = *std::max_element(logp.begin(), logp.end());
  if (!std::isfinite(top)) return p;
  double sum = 0;
  for (size_t i = 0; i < logp.size(); ++i) {
    p[i] = std::exp(logp[i] - top);
    sum += p[i];
  }
  for (float& x : p) x = static_cast<float>(x / sum);
  return p;
}

std::vector<Candidate> NucleusCandidates(std::span<const float> logp, double top_p, int top_k) {
  std::vector<float> p = Softmax(logp);
  // Only the first top_k of the stable descending order can be taken: a partial sort by
  // (probability descending, id ascending) gives exactly those, in that order.
  std::vector<int64_t> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  const size_t head = std::min(order.size(), static_cast<size_t>(std::max(top_k, 0)));
  std::partial_sort(order.begin(), order.begin() + head, order.end(),
                    [&](int64_t a, int64_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
  order.resize(head);
  std::vector<Candidate> kept;
  float cum = 0.0f;  // a float32 tensor upstream (0.0 + float32 element)
  const float bound = static_cast<float>(top_p);
  for (int64_t id : order) {
    if (!(cum < bound && static_cast<int>(kept.size()) < top_k)) break;
    cum += p[id];
    kept.push_back({id, p[id]});
  }
  return kept;
}

int64_t MultinomialIndex(std::span<const float> weights, double u) {
  double total = 0;
  for (float w : weights) total += w;
  double target = u * total, cum = 0;
  int64_t last_positive = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] <= 0) continue;
    cum += weights[i];
    last_positive = static_cast<int64_t>(i);
    if (cum > target) return last_positive;
  }
  return last_positive;  // u * total rounded up to the total: the last positive weight
}

RasDecision RasSample(std::vector<float> logp, std::span<const int64_t> decoded, bool ignore_eos,
                      const RasConfig& config, const std::function<double()>& uniform) {
  constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
  if (ignore_eos && config.eos >= 0 && config.eos < static_cast<int64_t>(logp.size())) {
    logp[config.eos] = kMinusInf;  // llm.py:157-158: only index speech_token_size is masked
  }
  std::vector<Candidate> nucleus = NucleusCandidates(logp, config.top_p, config.top_k);
  std::vector<float> weights;
  for (const Candidate& c : nucleus) weights.push_back(c.prob);
  RasDecision decision;
  decision.nucleus_size = nucleus.size();
  decision.nucleus_token = nucleus.at(MultinomialIndex(weights, uniform())).id;
  decision.token = decision.nucleus_token;
  // common.py:140-143: count the pick among the last win_size decoded tokens.
  size_t window = std::min(decoded.size(), static_cast<size_t>(std::max(config.win_size, 0)));
  int repeats =
      static_cast<int>(std::count(decoded.end() - window, decoded.end(), decision.nucleus_token));
  if (repeats >= config.win_size * config.tau_r) {
    logp[decision.nucleus_token] = kMinusInf;
    std::vector<float> full = Softmax(logp);
    decision.token = MultinomialIndex(full, uniform());
    decision.repetition_branch = true;
  }
  return decision;
}

int64_t GreedySample(std::vector<float> logp, bool ignore_eos, const RasConfig& config) {
  if (ignore_eos && config.eos >= 0 && config.eos < static_cast<int64_t>(logp.size())) {
    logp[config.eos] = -std::numeric_limits<float>::infinity();
  }
  return std::max_element(logp.begin(), logp.end()) - logp.begin();
}

}  // namespace voxserve::engine::cosyvoice
