// Repetition-aware sampling (RAS, VALL-E 2) as CosyVoice2 runs it on each LLM step: upstream's
// Qwen2LM.sampling_ids + ras_sampling + nucleus_sampling + random_sampling
// (cosyvoice/llm/llm.py:150-160, cosyvoice/utils/common.py:137-167; numbers from
// examples/libritts/cosyvoice2/conf/cosyvoice2.yaml via the bundle manifest). The random draws
// come from a per-sequence seeded generator (SequenceRng) or are injected by a test: torch's
// multinomial stream cannot be reproduced, so everything but the draws is upstream's exactly.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <vector>

namespace voxserve::engine::cosyvoice {

// Plain data, owned by value.
struct RasConfig {
  double top_p = 0.8;  // cosyvoice2.yaml sampling: top_p
  int top_k = 25;      // top_k
  int win_size = 10;   // win_size
  double tau_r = 0.1;  // tau_r
  int64_t eos = 6561;  // the id ignore_eos masks (speech_token_size)
};

struct Candidate {
  int64_t id = 0;
  float prob = 0;  // softmax probability (not renormalised, as upstream's multinomial takes it)
};

// Upstream's nucleus set: probabilities softmax(logp) sorted descending with a stable sort (ties
// keep the lower id first), taken while the running sum is < top_p and fewer than top_k are
// taken, so the token that crosses top_p is included. The sum is float32 compared with
// float32(top_p), as torch does it (common.py:149-158).
std::vector<Candidate> NucleusCandidates(std::span<const float> logp, double top_p, int top_k);

// torch.multinomial(weights, 1) given the uniform draw u in [0, 1): the first index whose
// cumulative weight exceeds u * total. Zero weights are never chosen.
int64_t MultinomialIndex(std::span<const float> weights, double u);

// softmax(logp) in float32 (entries at -inf become 0).
std::vector<float> Softmax(std::span<const float> logp);

// What one sampling call did, for tests and logs.
struct RasDecision {
  int64_t token = 0;
  bool repetition_branch = false;  // the nucleus pick repeated; resampled from the full softmax
  int64_t nucleus_token = 0;       // the nucleus pick before any resampling
  size_t nucleus_size = 0;         // candidates in the nucleus set
};

// One step: sampling_ids(logp, decoded, ignore_eos) with ras_sampling as `sampling`. `logp` is
// taken by value (upstream masks it in place). `uniform` returns draws in [0, 1): one for the
// nucleus pick and one more when the repetition branch resamples.
RasDecision RasSample(std::vector<float> logp, std::span<const int64_t> decoded, bool ignore_eos,
                      const RasConfig& config, const std::function<double()>& uniform);

// The greedy twin used by goldens and batching tests: argmax of logp (first index on ties) with
// eos masked while ignore_eos, as upstream's sampling_ids with an argmax `sampling` picks.
int64_t GreedySample(std::vector<float> logp, bool ignore_eos, const RasConfig& config);

// The per-sequence random source: std::mt19937_64 (its output sequence is fixed by the C++
// standard, so a seed gives the same draws with every standard library), 53 high bits -> [0, 1).
// Owned by one sequence; not thread-safe.
class SequenceRng {
 public:
  explicit SequenceRng(uint64_t seed) : engine_(seed) {}
  double Uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

 private:
  std::mt19937_64 engine_;
};

}  // namespace voxserve::engine::cosyvoice
