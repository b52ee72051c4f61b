#include "engine/cosyvoice/llm_prompt.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "engine/cosyvoice/npy.h"

namespace voxserve::engine::cosyvoice {
namespace {

absl::StatusOr<std::vector<float>> Table(const BundleManifest& m, const std::string& dir,
                                         const std::string& name, int64_t rows, int hidden) {
  auto it = m.tensors.find(name);
  if (it == m.tensors.end()) return core::NotFound("bundle has no tensor " + name);
  auto array = ReadNpy((std::filesystem::path(dir) / it->second.file).string());
  if (!array.ok()) return array.status();
  if (array->dtype != "float32" || array->shape != std::vector<int64_t>{rows, hidden}) {
    return core::InvalidArgument("tensor " + name + ": " + array->dtype + " " +
                                 ShapeString(array->shape) + ", the LLM needs float32 [" +
                                 std::to_string(rows) + ", " + std::to_string(hidden) + "]");
  }
  return std::move(array->floats);
}

}  // namespace

std::vector<int64_t> Preamble::Before(std::span<const int32_t> text) const {
  std::vector<int64_t> out;
  if (std::find(text.begin(), text.end(), endofprompt) == text.end()) out = ids;
  out.insert(out.end(), text.begin(), text.end());
  return out;
}

LlmPrompt PromptForMode(VoiceMode mode, std::span<const int32_t> transcript_tokens,
                        std::span<const int32_t> prompt_speech_tokens,
                        std::span<const int32_t> instruction_ids, const Preamble& preamble) {
  LlmPrompt prompt;
  switch (mode) {
    case VoiceMode::kZeroShot:
      prompt.text_ids = preamble.Before(transcript_tokens);
      prompt.speech_tokens.assign(prompt_speech_tokens.begin(), prompt_speech_tokens.end());
      break;
    case VoiceMode::kCrossLingual:
      break;
    case VoiceMode::kInstruct:
      prompt.text_ids.assign(instruction_ids.begin(), instruction_ids.end());
      break;
  }
  return prompt;
}

std::string InstructPromptText(std::string_view instructions, Family family) {
  if (family == Family::kCosyVoice3) {
    if (instructions.find(kEndOfPrompt) != std::string_view::npos) return std::string(instructions);
    return std::string(kCosyVoice3System) + " " + std::string(instructions) +
           std::string(kEndOfPrompt);
  }
  std::string text(instructions);
  if (!instructions.ends_with(kEndOfPrompt)) text += kEndOfPrompt;
  return text;
}

TokenLimits LimitsFor(const BundleManifest::Sampling& sampling, size_t text_len) {
  double n = static_cast<double>(text_len);
  return {static_cast<int64_t>(n * sampling.min_token_text_ratio),
          static_cast<int64_t>(n * sampling.max_token_text_ratio)};
}

absl::StatusOr<std::unique_ptr<LlmEmbeddings>> LlmEmbeddings::Create(const BundleManifest& m,
                                                                     const std::string& dir) {
  std::unique_ptr<LlmEmbeddings> e(new LlmEmbeddings());
  e->hidden_ = m.llm.hidden_size;
  e->speech_token_size_ = m.vocab.speech_token_size;
  auto text = Table(m, dir, "embed_tokens", m.vocab.text_vocab_size, e->hidden_);
  if (!text.ok()) return text.status();
  auto speech = Table(m, dir, "speech_embedding", m.vocab.speech_embedding_rows, e->hidden_);
  if (!speech.ok()) return speech.status();
  // sos and task_id: rows of llm_embedding in CosyVoice2 (llm.py:485-487), of speech_embedding
  // in CosyVoice3 (llm.py:482-484), which has no llm_embedding.
  const bool v3 = m.family == Family::kCosyVoice3;
  std::vector<float> specials;
  if (!v3) {
    auto table = Table(m, dir, "llm_embedding", m.vocab.llm_embedding_rows, e->hidden_);
    if (!table.ok()) return table.status();
    specials = std::move(*table);
  }
  const std::vector<float>& holder = v3 ? *speech : specials;
  const int64_t rows = static_cast<int64_t>(holder.size()) / e->hidden_;
  const auto h = static_cast<size_t>(e->hidden_);
  for (auto [id, row] :
       {std::pair{m.special_ids.sos, &e->sos_}, {m.special_ids.task_id, &e->task_id_}}) {
    if (id < 0 || id >= rows) {
      return core::InvalidArgument("special_ids: " + std::to_string(id) + " is not a row of " +
                                   (v3 ? "speech_embedding" : "llm_embedding") + " (" +
                                   std::to_string(rows) + " rows)");
    }
    row->assign(holder.begin() + id * h, holder.begin() + (id + 1) * h);
  }
  if (v3) e->endofprompt_ = m.special_ids.endofprompt;
  e->text_ = std::move(*text);
  e->speech_ = std::move(*speech);
  return e;
}

absl::StatusOr<std::vector<float>> LlmEmbeddings::PrefillInput(const LlmRequest& r) const {
  if (r.text_ids.empty()) return core::InvalidArgument("text_ids: empty (nothing to speak)");
  const size_t h = static_cast<size_t>(hidden_);
  const int64_t text_rows = static_cast<int64_t>(text_.size() / h);
  for (const auto* ids : {&r.prompt_text_ids, &r.text_ids}) {
    for (int64_t id : *ids) {
      if (id < 0 || id >= text_rows) {
        return core::InvalidArgument(
            std::string(ids == &r.text_ids ? "text_ids" : "prompt_text_ids") + ": id " +
            std::to_string(id) + " outside the text vocabulary [0, " + std::to_string(text_rows) +
            ")");
      }
    }
  }
  auto holds = [&](const std::vector<int64_t>& ids) {
    return std::find(ids.begin(), ids.end(), endofprompt_) != ids.end();
  };
  if (endofprompt_ >= 0 && !holds(r.prompt_text_ids) && !holds(r.text_ids)) {
    return core::InvalidArgument(
        "a CosyVoice3 LLM input needs <|endofprompt|> (id " + std::to_string(endofprompt_) +
        ") in its prompt text or text, as upstream's templates put it: \"You are a helpful "
        "assistant.<|endofprompt|>\" before the transcript");
  }
  for (int64_t t : r.prompt_speech_tokens) {
    if (t < 0 || t >= speech_token_size_) {
      return core::InvalidArgument("prompt_speech_tokens: token " + std::to_string(t) +
                                   " outside [0, " + std::to_string(speech_token_size_) + ")");
    }
  }
  std::vector<float> out;
  out.reserve((r.prompt_text_ids.size() + r.text_ids.size() + r.prompt_speech_tokens.size() + 2) *
              h);
  auto append = [&](const std::vector<float>& table, int64_t row) {
    out.insert(out.end(), table.begin() + row * h, table.begin() + (row + 1) * h);
  };
  out.insert(out.end(), sos_.begin(), sos_.end());
  for (int64_t id : r.prompt_text_ids) append(text_, id);
  for (int64_t id : r.text_ids) append(text_, id);
  out.insert(out.end(), task_id_.begin(), task_id_.end());
  for (int64_t t : r.prompt_speech_tokens) append(speech_, t);
  return out;
}

const float* LlmEmbeddings::SpeechEmbedding(int64_t token) const {
  return speech_.data() + token * hidden_;
}

}  // namespace voxserve::engine::cosyvoice
