// The LLM's share of a cloned voice's prompt in each mode (PromptForMode) against what
// upstream's own frontend_zero_shot / frontend_cross_lingual / frontend_instruct2 leave for the
// LLM (cosyvoice/cli/frontend.py:168-213), run on crafted features by the CTest fixture
// cosyvoice_mode_cases (make_mode_cases.py; skipped without VOXSERVE_COSYVOICE_REF), and the
// instruct prompt's text.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "engine/cosyvoice/llm_prompt.h"
#include "nlohmann/json.hpp"
#include "support/test_paths.h"

namespace voxserve::engine::cosyvoice {
namespace {

const nlohmann::json& Cases() {
  static const nlohmann::json cases = [] {
    std::ifstream file(std::string(test_paths::kModeCases) + "/mode_cases.json");
    if (!file) return nlohmann::json{{"missing", "no mode_cases.json: run the fixture first"}};
    return nlohmann::json::parse(file);
  }();
  return cases;
}

std::vector<int32_t> Ints(const nlohmann::json& array) { return array.get<std::vector<int32_t>>(); }
std::vector<int64_t> Longs(const nlohmann::json& array) {
  return array.get<std::vector<int64_t>>();
}

class ModeOracle : public ::testing::TestWithParam<std::pair<VoiceMode, const char*>> {
 protected:
  void SetUp() override {
    ASSERT_FALSE(Cases().contains("missing")) << Cases()["missing"];
    if (Cases().contains("skipped")) GTEST_SKIP() << Cases()["skipped"].get<std::string>();
  }
};

TEST_P(ModeOracle, PromptTextAndSpeechTokensAreWhatUpstreamsFrontendGivesTheLlm) {
  const auto [mode, name] = GetParam();
  const nlohmann::json& upstream = Cases()["modes"][name];
  const std::vector<int32_t> speech = Ints(Cases()["prompt_speech_tokens"]);
  LlmPrompt prompt = PromptForMode(mode, Ints(Cases()["transcript_tokens"]), speech,
                                   Ints(Cases()["instruction_ids"]));
  EXPECT_EQ(prompt.text_ids, Longs(upstream["llm_prompt_text"])) << name;
  EXPECT_EQ(prompt.speech_tokens, Longs(upstream["llm_prompt_speech_tokens"])) << name;
  // The flow keeps the whole prompt in every mode, which is what the runner gives it from the
  // profile whatever the mode (cosyvoice_runner.cc, Vocode).
  EXPECT_EQ(Ints(upstream["flow_prompt_speech_tokens"]), speech) << name;
  EXPECT_EQ(upstream["prompt_mel_frames"].get<size_t>(), 2 * speech.size()) << name;
  EXPECT_EQ(upstream["flow_embedding"], Cases()["speaker_embedding"]) << name;
  // The text to speak is never mixed into the prompt (llm.py:474 concatenates them later).
  EXPECT_EQ(Longs(upstream["text"]), Longs(Cases()["text_ids"])) << name;
}

INSTANTIATE_TEST_SUITE_P(Modes, ModeOracle,
                         ::testing::Values(std::pair{VoiceMode::kZeroShot, "zero_shot"},
                                           std::pair{VoiceMode::kCrossLingual, "cross_lingual"},
                                           std::pair{VoiceMode::kInstruct, "instruct"}),
                         [](const auto& info) { return std::string(info.param.second); });

TEST(InstructPromptText, EndsTheInstructionsWithEndOfPromptAsUpstreamsCallersWriteThem) {
  if (Cases().contains("skipped") || Cases().contains("missing")) {
    GTEST_SKIP() << "no oracle cases";
  }
  EXPECT_EQ(InstructPromptText(Cases()["instructions"].get<std::string>()),
            Cases()["instruct_text"].get<std::string>());
}

TEST(InstructPromptText, DoesNotRepeatAnEndOfPromptTheUserWrote) {
  EXPECT_EQ(InstructPromptText("Speak slowly.<|endofprompt|>"), "Speak slowly.<|endofprompt|>");
  EXPECT_EQ(InstructPromptText("Speak slowly."), "Speak slowly.<|endofprompt|>");
  // Only at the end: one in the middle is the user's text, tokenized as given.
  EXPECT_EQ(InstructPromptText("<|endofprompt|>x"), "<|endofprompt|>x<|endofprompt|>");
}

TEST(InstructPromptText, CosyVoice3WritesTheSystemTextAsUpstreamsInstructListDoes) {
  // common.py:28's form: "You are a helpful assistant. <instructions><|endofprompt|>".
  EXPECT_EQ(InstructPromptText("请用广东话表达。", Family::kCosyVoice3),
            "You are a helpful assistant. 请用广东话表达。<|endofprompt|>");
  // An entry of instruct_list, or any text that has its own <|endofprompt|>: as given.
  const std::string upstream = "You are a helpful assistant. 请用东北话表达。<|endofprompt|>";
  EXPECT_EQ(InstructPromptText(upstream, Family::kCosyVoice3), upstream);
  EXPECT_EQ(InstructPromptText("Speak slowly.", Family::kCosyVoice2),
            "Speak slowly.<|endofprompt|>");
}

TEST(Preamble, GoesBeforeTextThatHasNoEndOfPromptOfItsOwn) {
  const Preamble preamble{{10, 11, 151646}, 151646};
  const std::vector<int32_t> text{1, 2};
  EXPECT_EQ(preamble.Before(text), (std::vector<int64_t>{10, 11, 151646, 1, 2}));
  const std::vector<int32_t> own{5, 151646, 1};  // the user wrote a system text of their own
  EXPECT_EQ(preamble.Before(own), (std::vector<int64_t>{5, 151646, 1}));
  EXPECT_EQ(Preamble{}.Before(text), (std::vector<int64_t>{1, 2}));  // CosyVoice2: none
}

TEST(PromptForMode, CosyVoice3PutsThePreambleBeforeTheZeroShotTranscriptOnly) {
  const Preamble preamble{{10, 151646}, 151646};
  const std::vector<int32_t> transcript{1, 2}, speech{3}, instruction{7, 151646};
  EXPECT_EQ(PromptForMode(VoiceMode::kZeroShot, transcript, speech, {}, preamble).text_ids,
            (std::vector<int64_t>{10, 151646, 1, 2}));
  // Instruct: the instruction text carries its own (InstructPromptText); cross-lingual: the
  // preamble goes before each piece's text instead (the runner), the prompt text stays empty.
  EXPECT_EQ(PromptForMode(VoiceMode::kInstruct, transcript, speech, instruction, preamble).text_ids,
            (std::vector<int64_t>{7, 151646}));
  EXPECT_TRUE(
      PromptForMode(VoiceMode::kCrossLingual, transcript, speech, {}, preamble).text_ids.empty());
}

TEST(PromptForMode, ModesTakeOnlyTheirOwnParts) {
  const std::vector<int32_t> transcript{1, 2}, speech{3, 4, 5}, instruction{6};
  EXPECT_EQ(PromptForMode(VoiceMode::kZeroShot, transcript, speech, instruction).text_ids,
            (std::vector<int64_t>{1, 2}));
  // Instruct mode ignores the transcript even when the voice has one (frontend.py:210 passes
  // instruct_text as frontend_zero_shot's prompt_text).
  LlmPrompt instruct = PromptForMode(VoiceMode::kInstruct, transcript, speech, instruction);
  EXPECT_EQ(instruct.text_ids, (std::vector<int64_t>{6}));
  EXPECT_TRUE(instruct.speech_tokens.empty());
  LlmPrompt cross = PromptForMode(VoiceMode::kCrossLingual, transcript, speech, instruction);
  EXPECT_TRUE(cross.text_ids.empty());
  EXPECT_TRUE(cross.speech_tokens.empty());
}

}  // namespace
}  // namespace voxserve::engine::cosyvoice
