// The LLM's input as Qwen2LM.inference builds it for CosyVoice2 and CosyVoice3
// (cosyvoice/llm/llm.py:459-503, input at 474-494): [sos] + embed_tokens(prompt_text ++ text) +
// [task_id] + speech_embedding(prompt speech tokens), and the decode length limits from the
// text length. Reads the bundle's embedding tables.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/cosyvoice/bundle_manifest.h"
#include "engine/engine.h"

namespace voxserve::engine::cosyvoice {

// One sequence to generate, owned by value. Ids as the frontend makes them: text ids index
// embed_tokens, speech tokens are FSQ ids < speech_token_size.
struct LlmRequest {
  std::vector<int64_t> text_ids;              // the text to speak (one piece)
  std::vector<int64_t> prompt_text_ids;       // the prompt recording's transcript; may be empty
  std::vector<int64_t> prompt_speech_tokens;  // the prompt recording's tokens; may be empty
  uint64_t seed = 0;                          // SequenceRng seed: same seed, same tokens
  bool greedy = false;                        // argmax instead of RAS (goldens, tests)
};

// What the LLM sees of a cloned voice's prompt in each mode (engine::VoiceMode), as upstream's
// frontend leaves model_input for Qwen2LM.inference (cosyvoice/cli/frontend.py, ace7c47):
// - zero-shot (frontend_zero_shot, :168-189): prompt text = the transcript's tokens, prompt
//   speech tokens = the prompt's (:180-181);
// - cross-lingual (frontend_cross_lingual, :191-198): both deleted (:194-197);
// - instruct (frontend_instruct2, :209-213): prompt text = the instruct text's tokens (it is
//   frontend_zero_shot's prompt_text argument, :210), prompt speech tokens deleted (:211-212).
// The flow keeps flow_prompt_speech_token, prompt_speech_feat and the embedding in every mode.
// A mode's missing part is empty: Qwen2LM.inference's defaults (cli/model.py:328-330).
struct LlmPrompt {
  std::vector<int64_t> text_ids;       // LlmRequest::prompt_text_ids
  std::vector<int64_t> speech_tokens;  // LlmRequest::prompt_speech_tokens
};
// CosyVoice3's LLM reads a system text ended by <|endofprompt|> before the text it imitates or
// speaks (upstream asserts the token, llm.py:476-479). Upstream leaves it to its callers, whose
// examples put "You are a helpful assistant.<|endofprompt|>" before a zero-shot transcript and
// before a cross-lingual text; voxserve puts it there itself. CosyVoice2 has none.
inline constexpr std::string_view kEndOfPrompt = "<|endofprompt|>";
inline constexpr std::string_view kCosyVoice3System = "You are a helpful assistant.";
// The preamble's ids (the tokens of kCosyVoice3System + kEndOfPrompt; empty: none) and the
// <|endofprompt|> id. Plain data.
struct Preamble {
  std::vector<int64_t> ids;
  int64_t endofprompt = -1;
  // The preamble, then `text`; `text` alone when there is no preamble or it already holds
  // <|endofprompt|> (text written for upstream, with its own system text, works unchanged).
  std::vector<int64_t> Before(std::span<const int32_t> text) const;
};

// `preamble`: CosyVoice3's, before a zero-shot transcript (the cross-lingual text gets it per
// piece, as text: upstream's callers write it into tts_text, so the length limits count it).
LlmPrompt PromptForMode(VoiceMode mode, std::span<const int32_t> transcript_tokens,
                        std::span<const int32_t> prompt_speech_tokens,
                        std::span<const int32_t> instruction_ids, const Preamble& preamble = {});

// The text upstream tokenizes as instruct mode's prompt. inference_instruct2
// (cli/cosyvoice.py:177-179) tokenizes instruct_text as given, neither normalized nor extended,
// and upstream's instruct prompts end with <|endofprompt|> (cosyvoice/utils/common.py:28,
// instruct_list: "You are a helpful assistant. 请用广东话表达。<|endofprompt|>"). CosyVoice2: the
// instructions, <|endofprompt|> appended unless they already end with it. CosyVoice3: "You are a
// helpful assistant. " + the instructions + <|endofprompt|>, as instruct_list writes them, unless
// the instructions already hold <|endofprompt|> (then as given). Text written for upstream works
// unchanged either way.
std::string InstructPromptText(std::string_view instructions, Family family = Family::kCosyVoice2);

// min_len/max_len of llm.py:497-498: int(len(text) * ratio) over the text without the prompt.
struct TokenLimits {
  int64_t min_len = 0, max_len = 0;
};
TokenLimits LimitsFor(const BundleManifest::Sampling& sampling, size_t text_len);

// The embedding tables (float32 [rows, hidden]), read once; immutable after Create, so safe to
// share across threads.
class LlmEmbeddings {
 public:
  // embed_tokens, speech_embedding and (CosyVoice2) llm_embedding, which holds sos and task_id;
  // CosyVoice3 takes them from speech_embedding.
  static absl::StatusOr<std::unique_ptr<LlmEmbeddings>> Create(const BundleManifest& manifest,
                                                               const std::string& bundle_dir);

  int hidden() const { return hidden_; }
  // The prefill input [S, hidden] row-major, S = 1 + prompt text + text + 1 + prompt tokens.
  // InvalidArgument naming the field when an id is out of range or the text is empty, and for
  // CosyVoice3 when neither the prompt text nor the text holds <|endofprompt|> (upstream asserts
  // it, llm.py:476-479: its prompts are "You are a helpful assistant.<|endofprompt|>...").
  absl::StatusOr<std::vector<float>> PrefillInput(const LlmRequest& request) const;
  // Row `token` of speech_embedding (the next step's input); token < speech_embedding rows.
  const float* SpeechEmbedding(int64_t token) const;

 private:
  LlmEmbeddings() = default;
  int hidden_ = 0;
  int64_t speech_token_size_ = 0;
  int64_t endofprompt_ = -1;          // CosyVoice3: the id the text must hold; -1: none needed
  std::vector<float> text_, speech_;  // embed_tokens, speech_embedding
  std::vector<float> sos_, task_id_;  // their embedding rows [hidden]
};

}  // namespace voxserve::engine::cosyvoice
