// RAS as upstream's ras_sampling / nucleus_sampling / sampling_ids define it
// (cosyvoice/utils/common.py:137-167, cosyvoice/llm/llm.py:150-160), on crafted logits: the
// candidate set, the repetition branch decision and, with injected uniform draws, the token.
#include "engine/cosyvoice/ras_sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace voxserve::engine::cosyvoice {
namespace {

// Log-probabilities of the given probabilities (the rest of the vocabulary at -inf).
std::vector<float> LogOf(const std::vector<double>& probs) {
  std::vector<float> out;
  for (double p : probs) {
    out.push_back(p > 0 ? static_cast<float>(std::log(p))
                        : -std::numeric_limits<float>::infinity());
  }
  return out;
}

std::vector<int64_t> Ids(const std::vector<Candidate>& c) {
  std::vector<int64_t> ids;
  for (const Candidate& x : c) ids.push_back(x.id);
  return ids;
}

TEST(Nucleus, KeepsAddingWhileTheSumIsBelowTopPSoTheCrossingTokenIsIn) {
  // Sorted: 3 (0.5), 1 (0.2), 0 (0.15), 2 (0.1), 4 (0.05). 0.5 + 0.2 = 0.7 < 0.8, + 0.15 = 0.85:
  // token 0 crosses 0.8 and is kept; token 2 is not.
  auto c = NucleusCandidates(LogOf({0.15, 0.2, 0.1, 0.5, 0.05}), 0.8, 25);
  EXPECT_EQ(Ids(c), (std::vector<int64_t>{3, 1, 0}));
  EXPECT_NEAR(c[0].prob, 0.5, 1e-6);  // probabilities as softmax gives them, not renormalised
}

TEST(Nucleus, StopsAtTopKBeforeTopP) {
  std::vector<double> flat(100, 0.01);
  auto c = NucleusCandidates(LogOf(flat), 0.8, 25);
  EXPECT_EQ(c.size(), 25u);
}

TEST(Nucleus, TiesKeepTheLowerIdFirstAsAStableSortDoes) {
  auto c = NucleusCandidates(LogOf({0.25, 0.25, 0.25, 0.25}), 0.8, 25);
  EXPECT_EQ(Ids(c), (std::vector<int64_t>{0, 1, 2, 3}));  // 0.75 < 0.8: the fourth is taken too
  auto three = NucleusCandidates(LogOf({0.25, 0.25, 0.25, 0.25}), 0.5, 25);
  EXPECT_EQ(Ids(three), (std::vector<int64_t>{0, 1}));  // 0.5 is not < 0.5
}

TEST(Nucleus, OneHotIsOneCandidate) {
  auto c = NucleusCandidates(LogOf({0, 0, 1.0, 0}), 0.8, 25);
  EXPECT_EQ(Ids(c), (std::vector<int64_t>{2}));
}

TEST(Multinomial, PicksTheFirstIndexWhoseCumulativeWeightExceedsTheDraw) {
  std::vector<float> w = {0.5f, 0.2f, 0.3f};
  EXPECT_EQ(MultinomialIndex(w, 0.0), 0);
  EXPECT_EQ(MultinomialIndex(w, 0.49), 0);
  EXPECT_EQ(MultinomialIndex(w, 0.51), 1);
  EXPECT_EQ(MultinomialIndex(w, 0.71), 2);
  EXPECT_EQ(MultinomialIndex(w, 0.999999), 2);
  EXPECT_EQ(MultinomialIndex(std::vector<float>{0.0f, 1.0f, 0.0f}, 0.999999), 1);  // never a zero
  // Weights need not sum to one (upstream passes the kept probabilities as they are).
  EXPECT_EQ(MultinomialIndex(std::vector<float>{0.2f, 0.2f}, 0.6), 1);
}

class Ras : public ::testing::Test {
 protected:
  RasConfig config_;  // 0.8, 25, 10, 0.1, eos 6561: cosyvoice2.yaml's numbers
  // Draws handed out in order; the test fails if the sampler asks for more.
  std::function<double()> Draws(std::vector<double> draws) {
    return [draws, i = size_t{0}]() mutable {
      EXPECT_LT(i, draws.size()) << "the sampler drew more uniforms than upstream would";
      return i < draws.size() ? draws[i++] : 0.0;
    };
  }
  std::vector<float> Vocab(const std::vector<std::pair<int64_t, double>>& probs) {
    std::vector<double> p(6564, 0.0);
    for (auto [id, prob] : probs) p[id] = prob;
    return LogOf(p);
  }
};

TEST_F(Ras, NoRepeatInTheWindowKeepsTheNucleusPick) {
  auto logp = Vocab({{10, 0.6}, {11, 0.3}, {12, 0.1}});
  std::vector<int64_t> decoded = {1, 2, 3};
  auto d = RasSample(logp, decoded, false, config_, Draws({0.7}));  // 0.7 > 0.6: token 11
  EXPECT_EQ(d.token, 11);
  EXPECT_FALSE(d.repetition_branch);
}

TEST_F(Ras, OneRepeatAmongTheLastTenResamplesFromTheFullDistributionWithoutIt) {
  auto logp = Vocab({{10, 0.6}, {11, 0.3}, {12, 0.1}});
  std::vector<int64_t> decoded = {5, 10, 7};  // 10 once: 1 >= 10 * 0.1
  // First draw picks 10 from the nucleus; 10 is then -inf, so the full softmax is 11: 0.75,
  // 12: 0.25, and the second draw 0.8 lands on 12.
  auto d = RasSample(logp, decoded, false, config_, Draws({0.1, 0.8}));
  EXPECT_TRUE(d.repetition_branch);
  EXPECT_EQ(d.nucleus_token, 10);
  EXPECT_EQ(d.token, 12);
}

TEST_F(Ras, OnlyTheLastWinSizeTokensCount) {
  auto logp = Vocab({{10, 1.0}});
  std::vector<int64_t> decoded = {10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11};  // 10 is 11th from the end
  auto d = RasSample(logp, decoded, false, config_, Draws({0.5}));
  EXPECT_FALSE(d.repetition_branch);
  EXPECT_EQ(d.token, 10);
}

TEST_F(Ras, TheRepeatedTokenIsNeverResampled) {
  // Full distribution: 10 is 0.999, 20 is 0.001; after masking 10 only 20 remains.
  auto logp = Vocab({{10, 0.999}, {20, 0.001}});
  std::vector<int64_t> decoded = {10};
  auto d = RasSample(logp, decoded, false, config_, Draws({0.0, 0.0}));
  EXPECT_TRUE(d.repetition_branch);
  EXPECT_EQ(d.token, 20);
}

TEST_F(Ras, IgnoreEosMasksOnlyTheEosIndex) {
  // llm.py:157-158: index 6561 only; 6562 and 6563 stay (and stop the loop, llm.py:544).
  auto logp = Vocab({{6561, 0.9}, {6562, 0.1}});
  auto d = RasSample(logp, {}, true, config_, Draws({0.99}));
  EXPECT_EQ(d.token, 6562);
  EXPECT_EQ(GreedySample(logp, true, config_), 6562);
  EXPECT_EQ(GreedySample(logp, false, config_), 6561);
}

TEST_F(Ras, GreedyTakesTheFirstMaximum) {
  EXPECT_EQ(GreedySample(Vocab({{7, 0.4}, {9, 0.4}, {3, 0.2}}), false, config_), 7);
}

TEST(SequenceRng, SameSeedSameDrawsInZeroOne) {
  SequenceRng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    double x = a.Uniform();
    EXPECT_EQ(x, b.Uniform());
    EXPECT_GE(x, 0.0);
    EXPECT_LT(x, 1.0);
    differs = differs || x != c.Uniform();
  }
  EXPECT_TRUE(differs);
}

TEST(SequenceRng, IsTheStandardsMersenneTwister) {
  // std::mt19937_64's 10000th output for the default seed is fixed by [rand.predef]; a seed
  // therefore gives the same draws with any standard library.
  std::mt19937_64 engine;
  engine.discard(9999);
  EXPECT_EQ(engine(), 9981545732273789042ull);
}

}  // namespace
}  // namespace voxserve::engine::cosyvoice
