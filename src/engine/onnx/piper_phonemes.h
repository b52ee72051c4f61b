// Piper's front end after espeak-ng: clauses → sentences of phoneme code points → model ids,
// exactly as rhasspy/piper-phonemize (phonemize.cpp, phoneme_ids.cpp) and piper1-gpl do it.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/espeak/espeak_phonemizer.h"
#include "engine/onnx/piper_config.h"

namespace voxserve::engine::onnx {

// Groups espeak's clauses into sentences: each clause's IPA is NFD-decomposed, mapped through
// `phoneme_map`, stripped of language-switch flags, and followed by its punctuation ("." "?" "!"
// alone; "," ":" ";" followed by a space). A sentence ends after . ? !; empty sentences are
// dropped.
std::vector<std::u32string> PiperSentences(const std::vector<PhonemizedClause>& clauses,
                                           const PhonemeMap& phoneme_map);

// phoneme_type "text": the text's own NFD code points (through `phoneme_map`), one sentence.
std::u32string PiperTextPhonemes(std::string_view text, const PhonemeMap& phoneme_map);

struct PiperIds {
  std::vector<int64_t> ids;
  size_t missing = 0;  // phonemes absent from the map, skipped (Piper logs and skips them too)
};

// ^ _ (p _)* $ : BOS, PAD, then each known phoneme's ids followed by PAD, then EOS.
PiperIds PiperPhonemeIds(std::u32string_view phonemes, const PhonemeIdMap& id_map);

}  // namespace voxserve::engine::onnx
