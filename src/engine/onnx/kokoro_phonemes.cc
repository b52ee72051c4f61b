#include "engine/onnx/kokoro_phonemes.h"

#include "core/error.h"
#include "engine/onnx/code_points.h"
#include "nlohmann/json.hpp"

namespace voxserve::engine::onnx {
namespace {

void ReplaceAll(std::u32string& s, std::u32string_view from, std::u32string_view to) {
  for (size_t at = s.find(from); at != std::u32string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

bool IsPunctuationOrSpace(char32_t c) {
  return std::u32string_view(U";:,.!?¡¿—…\"«»“” ").find(c) != std::u32string_view::npos;
}

bool IsChunkBreak(char32_t c) {
  return std::u32string_view(U".,!?;").find(c) != std::u32string_view::npos;
}

std::u32string_view Trim(std::u32string_view s) {
  while (!s.empty() && s.front() == U' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == U' ') s.remove_suffix(1);
  return s;
}

}  // namespace

absl::StatusOr<KokoroVocab> ParseKokoroVocab(const std::string& json_text,
                                             const std::string& where) {
  auto json = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return core::InvalidArgument(where + ": not a JSON object");
  }
  const bool tokenizer = json.contains("model") && json["model"].is_object() &&
                         json["model"].contains("vocab") && json["model"]["vocab"].is_object();
  if (!tokenizer && (!json.contains("vocab") || !json["vocab"].is_object())) {
    return core::InvalidArgument(where + ": has no \"vocab\" object");
  }
  KokoroVocab vocab;
  for (const auto& [symbol, id] : (tokenizer ? json["model"]["vocab"] : json["vocab"]).items()) {
    if (tokenizer && id.is_number_integer() && id.get<int64_t>() == 0) continue;  // the pad
    std::u32string code_points = DecodeUtf8(symbol);
    if (code_points.size() != 1 || !id.is_number_integer() || id.get<int64_t>() <= 0) {
      return core::InvalidArgument(where + ": vocab['" + symbol +
                                   "'] must map one symbol to an id > 0");
    }
    vocab[code_points[0]] = id.get<int64_t>();
  }
  if (vocab.empty()) return core::InvalidArgument(where + ": the vocab is empty");
  return vocab;
}

std::string KokoroEspeakVoice(std::string_view voice_name) {
  switch (voice_name.empty() ? 'a' : voice_name.front()) {
    case 'b':
      return "en-gb";
    case 'e':
      return "es";
    case 'f':
      return "fr-fr";
    case 'h':
      return "hi";
    case 'i':
      return "it";
    case 'j':
      return "ja";
    case 'p':
      return "pt-br";
    case 'z':
      return "cmn";
    default:
      return "en-us";
  }
}

std::u32string KokoroPhonemeString(const std::vector<PhonemizedClause>& clauses,
                                   bool american_english) {
  std::u32string s;
  for (const PhonemizedClause& clause : clauses) {
    std::u32string phonemes = DecodeUtf8(RemoveLanguageFlags(clause.phonemes));
    if (phonemes.empty() && clause.end == ClauseEnd::kNone) continue;
    if (!s.empty()) s += U' ';
    s += phonemes;
    for (char c : PunctuationFor(clause.end)) s += static_cast<char32_t>(c);
  }
  // kokoro-onnx's tokenizer.py, in its order.
  ReplaceAll(s, U"kəkˈoːɹoʊ", U"kˈoʊkəɹoʊ");
  ReplaceAll(s, U"kəkˈɔːɹəʊ", U"kˈəʊkəɹəʊ");
  ReplaceAll(s, U"ʲ", U"j");
  ReplaceAll(s, U"r", U"ɹ");
  ReplaceAll(s, U"x", U"k");
  ReplaceAll(s, U"ɬ", U"l");
  const std::u32string hundred = U"hˈʌndɹɪd";
  for (size_t at = s.find(hundred); at != std::u32string::npos; at = s.find(hundred, at + 2)) {
    char32_t before = at > 0 ? s[at - 1] : U' ';
    if ((before >= U'a' && before <= U'z') || before == U'ɹ' || before == U'ː') {
      s.insert(at, 1, U' ');
    }
  }
  for (size_t at = s.find(U" z"); at != std::u32string::npos; at = s.find(U" z", at + 1)) {
    if (at + 2 == s.size() || IsPunctuationOrSpace(s[at + 2])) s.erase(at, 1);
  }
  if (american_english) {
    const std::u32string ninety = U"nˈaɪnti";
    for (size_t at = s.find(ninety); at != std::u32string::npos; at = s.find(ninety, at + 1)) {
      if (at + ninety.size() == s.size() || s[at + ninety.size()] != U'ː') s[at + 5] = U'd';
    }
  }
  return std::u32string(Trim(s));
}

std::vector<std::vector<int64_t>> KokoroTokenChunks(std::u32string_view phonemes,
                                                    const KokoroVocab& vocab, size_t max_tokens) {
  std::u32string known;
  for (char32_t c : phonemes) {
    if (vocab.contains(c)) known += c;
  }
  std::vector<std::u32string> chunks;
  std::u32string current;
  auto flush = [&] {
    std::u32string_view trimmed = Trim(current);
    if (!trimmed.empty()) chunks.emplace_back(trimmed);
    current.clear();
  };
  size_t start = 0;
  while (start < known.size()) {
    // The next piece runs through the next chunk-break punctuation mark (or to the end).
    size_t end = start;
    while (end < known.size() && !IsChunkBreak(known[end])) ++end;
    if (end < known.size()) ++end;
    std::u32string_view piece = std::u32string_view(known).substr(start, end - start);
    start = end;
    if (current.size() + piece.size() > max_tokens) flush();
    while (piece.size() > max_tokens) {  // one clause longer than the context: cut at a space
      size_t cut = piece.substr(0, max_tokens).rfind(U' ');
      if (cut == std::u32string_view::npos || cut == 0) cut = max_tokens;
      current = piece.substr(0, cut);
      flush();
      piece.remove_prefix(cut);
    }
    current += piece;
  }
  flush();
  std::vector<std::vector<int64_t>> tokens;
  for (const std::u32string& chunk : chunks) {
    std::vector<int64_t>& ids = tokens.emplace_back();
    for (char32_t c : chunk) ids.push_back(vocab.at(c));
  }
  return tokens;
}

}  // namespace voxserve::engine::onnx
