// CosyVoice3's silent-token guard between the LLM and the flow (cli/model.py:102, :121-128).
#include "engine/cosyvoice/silent_tokens.h"

#include <gtest/gtest.h>

#include <vector>

namespace voxserve::engine::cosyvoice {
namespace {

// CosyVoice3Model.silent_tokens (model.py:423).
const std::vector<int64_t> kSilent = {1, 2, 28, 29, 55, 248, 494, 2241, 2242, 2322, 2323};

std::vector<int64_t> Kept(SilentRunFilter& filter, const std::vector<int64_t>& tokens) {
  std::vector<int64_t> kept;
  for (int64_t t : tokens) {
    if (filter.Keep(t)) kept.push_back(t);
  }
  return kept;
}

TEST(SilentRunFilter, KeepsTheFirstFiveOfARunOfSilentTokensAndEveryOtherToken) {
  SilentRunFilter filter(kSilent);
  // A run of 7 silent ids (mixed ids count as one run), a speech token, a run of 5, a run of 6.
  const std::vector<int64_t> tokens = {1, 2, 28, 29,   55,   248,  494,  7,    1,    1, 1,
                                       1, 1, 9,  2323, 2323, 2323, 2323, 2323, 2323, 3};
  EXPECT_EQ(Kept(filter, tokens), (std::vector<int64_t>{1, 2, 28, 29, 55, 7, 1, 1, 1, 1, 1, 9, 2323,
                                                        2323, 2323, 2323, 2323, 3}));
}

TEST(SilentRunFilter, ANewPieceStartsTheRunAgainAndCosyVoice2KeepsEverything) {
  SilentRunFilter filter(kSilent);
  EXPECT_EQ(Kept(filter, {1, 1, 1, 1, 1, 1}).size(), 5u);
  filter.Reset();
  EXPECT_EQ(Kept(filter, {1}).size(), 1u);  // upstream's counter is per llm_job (one piece)
  SilentRunFilter none;                     // CosyVoice2: no silent ids in its manifest
  EXPECT_EQ(Kept(none, std::vector<int64_t>(9, 1)).size(), 9u);
}

}  // namespace
}  // namespace voxserve::engine::cosyvoice
