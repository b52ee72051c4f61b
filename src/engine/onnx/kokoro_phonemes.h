// Kokoro's front end after espeak-ng, following kokoro-onnx's tokenizer (the espeak path that
// C++ servers use; misaki's English lexicons are Python-only): espeak IPA with punctuation
// kept, Kokoro's symbol replacements, unknown symbols dropped, ≤ 510 tokens per chunk.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/espeak/espeak_phonemizer.h"

namespace voxserve::engine::onnx {

// One code point → token id (config.json "vocab"; 0 is the boundary pad and never listed).
using KokoroVocab = std::map<char32_t, int64_t>;

// Kokoro's context is 512 positions: 510 tokens plus a 0 pad at each end.
inline constexpr size_t kKokoroMaxTokens = 510;

// The "vocab" object of a Kokoro config.json (or of the graph's kokoro_config metadata), or the
// "model"."vocab" of a tokenizer.json (onnx-community's repository; it also lists the pad, "$": 0,
// which is skipped).
absl::StatusOr<KokoroVocab> ParseKokoroVocab(const std::string& json_text,
                                             const std::string& where);

// The espeak-ng voice for a Kokoro voice name, by its language letter (a = American English,
// b = British English, e = es, f = fr-fr, h = hi, i = it, j = ja, p = pt-br, z = cmn).
std::string KokoroEspeakVoice(std::string_view voice_name);

// espeak clauses → the phoneme string Kokoro expects: each clause's IPA (language flags removed)
// followed by its punctuation, clauses separated by a space, then kokoro-onnx's replacements
// (ʲ→j, r→ɹ, x→k, ɬ→l, "kokoro", "hundred", "ninety" for American English).
std::u32string KokoroPhonemeString(const std::vector<PhonemizedClause>& clauses,
                                   bool american_english);

// Token ids of `phonemes` (symbols not in the vocabulary dropped), cut into chunks of at most
// `max_tokens`, preferably after . , ! ? ; (as kokoro-onnx splits), else at a space.
std::vector<std::vector<int64_t>> KokoroTokenChunks(std::u32string_view phonemes,
                                                    const KokoroVocab& vocab,
                                                    size_t max_tokens = kKokoroMaxTokens);

}  // namespace voxserve::engine::onnx
