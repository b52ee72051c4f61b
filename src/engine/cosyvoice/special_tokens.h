// CosyVoice's text special tokens: the lists upstream adds to Qwen2's tokenizer, as data, and
// the tokenizer built with them (ids as Hugging Face's add_special_tokens assigns them).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "text/bpe_tokenizer.h"

namespace voxserve::engine::cosyvoice {

enum class TokenizerVersion { kCosyVoice2, kCosyVoice3 };

// The tokens upstream passes to add_special_tokens(), in the order HF adds them: eos_token and
// pad_token ("<|endoftext|>", already Qwen2's), then additional_special_tokens
// (cosyvoice/tokenizer/tokenizer.py:245-256 for CosyVoice2, :277-308 for CosyVoice3, which
// extends CosyVoice2's list). Those Qwen2 already has keep their ids (151643-151645); the rest
// get 151646 on in list order: CosyVoice2 "<|endofprompt|>" = 151646 ... "[mn]" = 151662.
std::span<const std::string_view> SpecialTokens(TokenizerVersion version);

// Qwen2Tokenizer::Create(directory, SpecialTokens(version)): the tokenizer of upstream's
// get_qwen_tokenizer(token_path, skip_special_tokens, version) (tokenizer.py:316-327). Decode
// with skip_special_tokens = true to match upstream's default.
absl::StatusOr<std::unique_ptr<text::Qwen2Tokenizer>> LoadTokenizer(const std::string& directory,
                                                                    TokenizerVersion version);

}  // namespace voxserve::engine::cosyvoice
