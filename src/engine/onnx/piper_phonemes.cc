#include "engine/onnx/piper_phonemes.h"

#include "engine/onnx/code_points.h"

namespace voxserve::engine::onnx {
namespace {

void AppendMapped(std::u32string_view phonemes, const PhonemeMap& phoneme_map,
                  std::u32string& out) {
  for (char32_t p : phonemes) {
    auto it = phoneme_map.find(p);
    if (it == phoneme_map.end()) {
      out += p;
    } else {
      out += it->second;
    }
  }
}

void Append(const std::vector<int64_t>& ids, std::vector<int64_t>& out) {
  out.insert(out.end(), ids.begin(), ids.end());
}

}  // namespace

std::vector<std::u32string> PiperSentences(const std::vector<PhonemizedClause>& clauses,
                                           const PhonemeMap& phoneme_map) {
  std::vector<std::u32string> sentences;
  bool open = false;
  for (const PhonemizedClause& clause : clauses) {
    if (!open) sentences.emplace_back();
    open = true;
    std::u32string& sentence = sentences.back();
    AppendMapped(NfdCodePoints(RemoveLanguageFlags(clause.phonemes)), phoneme_map, sentence);
    std::string_view punctuation = PunctuationFor(clause.end);
    if (!punctuation.empty()) {
      sentence += static_cast<char32_t>(punctuation[0]);
      if (!EndsSentence(clause.end)) sentence += U' ';
    }
    if (EndsSentence(clause.end)) open = false;
  }
  std::erase_if(sentences, [](const std::u32string& s) {
    return s.find_first_not_of(U" .,:;!?") == std::u32string::npos;
  });
  return sentences;
}

std::u32string PiperTextPhonemes(std::string_view text, const PhonemeMap& phoneme_map) {
  std::u32string out;
  AppendMapped(NfdCodePoints(text), phoneme_map, out);
  return out;
}

PiperIds PiperPhonemeIds(std::u32string_view phonemes, const PhonemeIdMap& id_map) {
  PiperIds result;
  const std::vector<int64_t>& pad = id_map.at(kPiperPad);  // Validate() guarantees _ ^ $
  Append(id_map.at(kPiperBos), result.ids);
  Append(pad, result.ids);
  for (char32_t phoneme : phonemes) {
    auto it = id_map.find(phoneme);
    if (it == id_map.end()) {
      ++result.missing;
      continue;
    }
    Append(it->second, result.ids);
    Append(pad, result.ids);
  }
  Append(id_map.at(kPiperEos), result.ids);
  return result;
}

}  // namespace voxserve::engine::onnx
