#include "text/lexicon/lexicon.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>

#include "core/error.h"
#include "nlohmann/json.hpp"
#include "text/visible_text.h"
#include "text/xml_reader.h"

namespace voxserve::text::lexicon {
namespace {

absl::Status Invalid(const std::string& message) {
  return core::InvalidArgument(message, "file", "invalid_dictionary");
}

std::string Trimmed(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  const size_t end = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(begin, end - begin + 1));
}

// ---- PLS

class PlsParser : public XmlHandler {
 public:
  explicit PlsParser(const LexiconLimits& limits) : limits_(limits) {}

  absl::StatusOr<Lexicon> Run(std::string_view xml) {
    if (xml.size() > static_cast<size_t>(INT32_MAX)) return Invalid("dictionary too large");
    XmlReader reader("PLS", [](const std::string& message, XmlPosition at) {
      return Invalid(message + " at line " + std::to_string(at.line) + ", column " +
                     std::to_string(at.column));
    });
    reader_ = &reader;
    absl::Status status = reader.Read(xml, *this);
    reader_ = nullptr;
    if (!status.ok()) return status;
    return std::move(lexicon_);
  }

 private:
  enum class Field { kNone, kGrapheme, kPhoneme, kAlias };

  void OnStart(std::string_view name, const char** attributes) override { Start(name, attributes); }
  void OnEnd(std::string_view name) override { End(name); }
  void OnText(std::string_view text) override { Text(text); }

  void Fail(const std::string& message) { reader_->Fail(message); }
  bool Failed() const { return reader_->failed(); }

  static std::optional<std::string_view> Attribute(const char** attributes, std::string_view key) {
    return XmlReader::Attribute(attributes, key);
  }

  void Start(std::string_view name, const char** attributes) {
    if (Failed()) return;
    if (++depth_ > limits_.max_depth) return Fail("PLS nested too deep");
    if (depth_ == 1) {
      if (name != "lexicon") return Fail("the root element must be <lexicon>");
      std::string_view alphabet = Attribute(attributes, "alphabet").value_or("ipa");
      if (alphabet != "ipa") return Fail("only alphabet=\"ipa\" is supported");
      lexicon_.language = std::string(Attribute(attributes, "xml:lang").value_or(""));
      return;
    }
    if (name == "lexeme") {
      if (in_lexeme_) return Fail("<lexeme> inside <lexeme>");
      in_lexeme_ = true;
      lexeme_ = {};
      return;
    }
    if (!in_lexeme_) return;  // <meta>, <metadata> and what else a lexicon may hold
    field_ = Field::kNone;
    if (name == "grapheme") field_ = Field::kGrapheme;
    if (name == "alias") field_ = Field::kAlias;
    if (name == "phoneme") {
      std::string_view alphabet = Attribute(attributes, "alphabet").value_or("ipa");
      if (alphabet != "ipa") return Fail("only alphabet=\"ipa\" is supported");
      field_ = Field::kPhoneme;
    }
    value_.clear();
  }

  void End(std::string_view name) {
    if (Failed()) return;
    --depth_;
    if (!in_lexeme_) return;
    if (name == "lexeme") {
      in_lexeme_ = false;
      if (lexeme_.graphemes.empty()) return Fail("a <lexeme> without a <grapheme>");
      if (lexeme_.alias.empty() && lexeme_.ipa.empty()) {
        return Fail("a <lexeme> without a <phoneme> or an <alias>");
      }
      lexicon_.lexemes.push_back(std::move(lexeme_));
      return;
    }
    if (field_ == Field::kNone) return;
    std::string value = Trimmed(value_);
    if (value.size() > limits_.max_grapheme_chars) {
      return Fail("<" + std::string(name) + "> longer than " +
                  std::to_string(limits_.max_grapheme_chars) + " bytes");
    }
    if (!value.empty()) {
      if (std::string problem = UnspeakableTextProblem(value); !problem.empty()) {
        return Fail("<" + std::string(name) + "> " + problem);
      }
      // Each grapheme is one rule (RuleCount): the bound counts them, not the lexemes.
      if (field_ == Field::kGrapheme && ++rules_ > limits_.max_rules) {
        return Fail("more than " + std::to_string(limits_.max_rules) + " graphemes (rules)");
      }
      // The first <phoneme> and <alias> count (PLS: the first is preferred).
      if (field_ == Field::kGrapheme) lexeme_.graphemes.push_back(std::move(value));
      if (field_ == Field::kPhoneme && lexeme_.ipa.empty()) lexeme_.ipa = std::move(value);
      if (field_ == Field::kAlias && lexeme_.alias.empty()) lexeme_.alias = std::move(value);
    }
    field_ = Field::kNone;
  }

  void Text(std::string_view text) {
    if (Failed() || field_ == Field::kNone) return;
    if (value_.size() + text.size() > limits_.max_grapheme_chars * 4) return;  // bounded
    value_ += text;
  }

  const LexiconLimits& limits_;
  XmlReader* reader_ = nullptr;  // while Run reads
  int depth_ = 0;
  bool in_lexeme_ = false;
  size_t rules_ = 0;  // graphemes so far
  Field field_ = Field::kNone;
  std::string value_;
  Lexeme lexeme_;
  Lexicon lexicon_;
};

// ---- Applying

bool IsCjk(UChar32 c) {
  return (c >= 0x2E80 && c <= 0x9FFF) || (c >= 0xAC00 && c <= 0xD7AF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFF00 && c <= 0xFFEF) ||
         (c >= 0x20000 && c <= 0x3FFFF);
}

// The code point at `pos` and its length in bytes (valid UTF-8; a stray byte counts as one).
UChar32 CodePointAt(std::string_view text, size_t pos, size_t* length) {
  int32_t i = static_cast<int32_t>(pos);
  UChar32 c = 0;
  U8_NEXT(text.data(), i, static_cast<int32_t>(text.size()), c);
  *length = static_cast<size_t>(i) - pos;
  return c;
}

UChar32 CodePointBefore(std::string_view text, size_t pos) {
  int32_t i = static_cast<int32_t>(pos);
  UChar32 c = 0;
  U8_PREV(text.data(), 0, i, c);
  return c;
}

bool IsWordCharacter(UChar32 c) { return c >= 0 && (u_isalnum(c) || c == '_'); }

struct Candidate {
  std::string_view grapheme;
  const Lexeme* lexeme;
  size_t order;    // precedence: lower first among equal lengths
  bool cjk_start;  // no word boundary needed before it (or the lexeme asks for none)
  bool cjk_end;    // ... or after it
};

// Whether `a` wins over `b` where both match: the longer, then the earlier.
bool Better(const Candidate& a, const Candidate& b) {
  if (a.grapheme.size() != b.grapheme.size()) return a.grapheme.size() > b.grapheme.size();
  return a.order < b.order;
}

UChar32 Folded(UChar32 c) { return u_foldCase(c, U_FOLD_CASE_DEFAULT); }

// The length in bytes of the text at `pos` that spells `grapheme` (Unicode simple case folding
// when not case-sensitive), or 0.
size_t MatchLength(std::string_view text, size_t pos, std::string_view grapheme,
                   bool case_sensitive) {
  if (case_sensitive) {
    return text.substr(pos, grapheme.size()) == grapheme ? grapheme.size() : 0;
  }
  size_t at = pos;
  for (size_t g = 0; g < grapheme.size();) {
    if (at >= text.size()) return 0;
    size_t g_length = 0, t_length = 0;
    const UChar32 want = CodePointAt(grapheme, g, &g_length);
    const UChar32 have = CodePointAt(text, at, &t_length);
    if (want != have && Folded(want) != Folded(have)) return 0;
    g += g_length;
    at += t_length;
  }
  return at - pos;
}

class Index {
 public:
  explicit Index(std::span<const Lexicon* const> lexicons) {
    size_t order = 0;
    for (const Lexicon* lexicon : lexicons) {
      for (const Lexeme& lexeme : lexicon->lexemes) {
        for (const std::string& grapheme : lexeme.graphemes) {
          if (grapheme.empty()) continue;
          size_t first_length = 0;
          const UChar32 first = CodePointAt(grapheme, 0, &first_length);
          const UChar32 last = CodePointBefore(grapheme, grapheme.size());
          const bool anywhere = !lexeme.word_boundaries;
          // Case-insensitive graphemes are found by their first code point's folding.
          by_first_[lexeme.case_sensitive ? first : Folded(first)].push_back(
              {grapheme, &lexeme, order++, anywhere || IsCjk(first), anywhere || IsCjk(last)});
        }
      }
    }
    for (auto& [first, candidates] : by_first_) {
      std::stable_sort(candidates.begin(), candidates.end(),
                       [](const Candidate& a, const Candidate& b) { return Better(a, b); });
    }
  }

  bool empty() const { return by_first_.empty(); }

  struct Match {
    const Candidate* candidate = nullptr;  // null: none
    size_t length = 0;                     // of the text matched, in bytes
  };

  // The match starting at `pos` of `text`: the longest grapheme, of equal ones the first.
  Match Find(std::string_view text, size_t pos, UChar32 here, bool at_word_start) const {
    Match best;
    for (UChar32 key : {here, Folded(here)}) {
      auto it = by_first_.find(key);
      if (it == by_first_.end()) continue;
      for (const Candidate& candidate : it->second) {
        // Candidates are longest first: none after a match can beat it under this key.
        if (best.candidate != nullptr && Better(*best.candidate, candidate)) break;
        if (key != here && candidate.lexeme->case_sensitive) continue;
        if (!at_word_start && !candidate.cjk_start) continue;
        const size_t length =
            MatchLength(text, pos, candidate.grapheme, candidate.lexeme->case_sensitive);
        if (length == 0) continue;
        if (pos + length < text.size() && !candidate.cjk_end) {
          size_t next_length = 0;
          if (IsWordCharacter(CodePointAt(text, pos + length, &next_length))) continue;
        }
        best = {&candidate, length};
        break;
      }
      if (Folded(here) == here) break;
    }
    return best;
  }

 private:
  std::unordered_map<UChar32, std::vector<Candidate>> by_first_;
};

void RewriteItem(const ssml::SpeechItem& item, const Index& index, bool speaks_ipa,
                 std::vector<ssml::SpeechItem>& out) {
  ssml::SpeechItem piece = item;
  piece.text.clear();
  bool first_piece = true;
  auto flush = [&] {
    if (piece.text.empty()) return;
    piece.starts_sentence = first_piece && item.starts_sentence;
    first_piece = false;
    out.push_back(piece);
    piece.text.clear();
  };
  const std::string_view text = item.text;
  UChar32 previous = -1;
  for (size_t pos = 0; pos < text.size();) {
    size_t length = 0;
    const UChar32 here = CodePointAt(text, pos, &length);
    const bool at_word_start = !IsWordCharacter(previous);
    const Index::Match match = index.Find(text, pos, here, at_word_start);
    if (match.candidate == nullptr) {
      piece.text.append(text.substr(pos, length));
      previous = here;
      pos += length;
      continue;
    }
    const Lexeme& lexeme = *match.candidate->lexeme;
    const std::string_view matched = text.substr(pos, match.length);
    if (!lexeme.ipa.empty() && speaks_ipa) {
      flush();
      ssml::SpeechItem phoneme = item;
      phoneme.text = std::string(matched);
      phoneme.phonemes = lexeme.ipa;
      phoneme.starts_sentence = first_piece && item.starts_sentence;
      first_piece = false;
      out.push_back(std::move(phoneme));
    } else {
      piece.text += lexeme.alias.empty() ? matched : std::string_view(lexeme.alias);
    }
    pos += match.length;
    previous = CodePointBefore(text, pos);
  }
  flush();
}

}  // namespace

absl::StatusOr<Lexicon> ParsePls(std::string_view xml, const LexiconLimits& limits) {
  return PlsParser(limits).Run(xml);
}

size_t RuleCount(const Lexicon& lexicon) {
  size_t rules = 0;
  for (const Lexeme& lexeme : lexicon.lexemes) rules += lexeme.graphemes.size();
  return rules;
}

absl::StatusOr<Lexicon> ParseJsonLexicon(std::string_view json_text, const LexiconLimits& limits) {
  nlohmann::json json = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return Invalid("a JSON dictionary must be an object ({\"entries\": {grapheme: alias}})");
  }
  Lexicon lexicon;
  const nlohmann::json* entries = &json;
  if (auto it = json.find("entries"); it != json.end()) {
    if (!it->is_object()) return Invalid("\"entries\" must be an object of grapheme → entry");
    entries = &*it;
    if (auto language = json.find("language"); language != json.end()) {
      if (!language->is_string()) return Invalid("\"language\" must be a string");
      lexicon.language = language->get<std::string>();
    }
  }
  if (entries->size() > limits.max_rules) {
    return Invalid("more than " + std::to_string(limits.max_rules) + " entries");
  }
  auto bounded = [&](const std::string& value, const std::string& what) -> absl::Status {
    if (value.empty() || value.size() > limits.max_grapheme_chars) {
      return Invalid(what + " must hold 1 to " + std::to_string(limits.max_grapheme_chars) +
                     " bytes");
    }
    if (std::string problem = UnspeakableTextProblem(value); !problem.empty()) {
      return Invalid(what + " " + problem);
    }
    return absl::OkStatus();
  };
  for (const auto& [grapheme, entry] : entries->items()) {
    Lexeme lexeme;
    const std::string key = Trimmed(grapheme);
    if (absl::Status status = bounded(key, "a grapheme"); !status.ok()) return status;
    lexeme.graphemes.push_back(key);
    if (entry.is_string()) {
      lexeme.alias = Trimmed(entry.get<std::string>());
    } else if (entry.is_object()) {
      for (const auto& [field, value] : entry.items()) {
        if ((field == "case_sensitive" || field == "word_boundaries") && value.is_boolean()) {
          (field == "case_sensitive" ? lexeme.case_sensitive : lexeme.word_boundaries) =
              value.get<bool>();
          continue;
        }
        if ((field != "alias" && field != "ipa") || !value.is_string()) {
          return Invalid("the entry of " + core::Quoted(key) +
                         " may hold \"alias\" and \"ipa\" strings and \"case_sensitive\" "
                         "and \"word_boundaries\" booleans only");
        }
        (field == "alias" ? lexeme.alias : lexeme.ipa) = Trimmed(value.get<std::string>());
      }
    } else {
      return Invalid("the entry of " + core::Quoted(key) +
                     " must be an alias string or {\"alias\": ..., \"ipa\": ...}");
    }
    if (lexeme.alias.empty() && lexeme.ipa.empty()) {
      return Invalid("the entry of " + core::Quoted(key) + " has neither alias nor ipa");
    }
    for (const std::string* value : {&lexeme.alias, &lexeme.ipa}) {
      if (value->size() > limits.max_grapheme_chars) {
        return Invalid("the entry of " + core::Quoted(key) + " is longer than " +
                       std::to_string(limits.max_grapheme_chars) + " bytes");
      }
      if (std::string problem = UnspeakableTextProblem(*value);
          !value->empty() && !problem.empty()) {
        return Invalid("the entry of " + core::Quoted(key) + " " + problem);
      }
    }
    lexicon.lexemes.push_back(std::move(lexeme));
  }
  return lexicon;
}

absl::StatusOr<Lexicon> ParseLexicon(std::string_view bytes, const LexiconLimits& limits) {
  const size_t first = bytes.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && bytes[first] == '{') {
    return ParseJsonLexicon(bytes, limits);
  }
  return ParsePls(bytes, limits);
}

absl::StatusOr<std::vector<Lexeme>> ParseRules(std::string_view rules_json,
                                               const LexiconLimits& limits,
                                               std::string_view field) {
  const std::string name(field);
  nlohmann::json rules = nlohmann::json::parse(rules_json, nullptr, /*allow_exceptions=*/false);
  if (rules.is_discarded() || !rules.is_array()) {
    return core::InvalidArgument(name + " must be an array of rules", name, "invalid_dictionary");
  }
  if (rules.size() > limits.max_rules) {
    return core::InvalidArgument(
        name + " holds more than " + std::to_string(limits.max_rules) + " rules", name,
        "invalid_dictionary");
  }
  std::vector<Lexeme> lexemes;
  lexemes.reserve(rules.size());
  for (size_t i = 0; i < rules.size(); ++i) {
    const std::string at = name + "[" + std::to_string(i) + "]";
    auto invalid = [&](const std::string& message) {
      return core::InvalidArgument(at + ": " + message, at, "invalid_dictionary");
    };
    const nlohmann::json& rule = rules[i];
    if (!rule.is_object()) return invalid("a rule must be an object");
    auto text = [&](const char* key, bool required) -> absl::StatusOr<std::string> {
      auto it = rule.find(key);
      if (it == rule.end() || it->is_null()) {
        if (required) return invalid(std::string("\"") + key + "\" is required");
        return std::string();
      }
      if (!it->is_string()) return invalid(std::string("\"") + key + "\" must be a string");
      std::string value = Trimmed(it->get<std::string>());
      if (value.empty() || value.size() > limits.max_grapheme_chars) {
        return invalid(std::string("\"") + key + "\" must hold 1 to " +
                       std::to_string(limits.max_grapheme_chars) + " bytes");
      }
      if (std::string problem = UnspeakableTextProblem(value); !problem.empty()) {
        return invalid(std::string("\"") + key + "\" " + problem);
      }
      return value;
    };
    auto flag = [&](const char* key, bool& out) -> absl::Status {
      auto it = rule.find(key);
      if (it == rule.end() || it->is_null()) return absl::OkStatus();
      if (!it->is_boolean()) return invalid(std::string("\"") + key + "\" must be a boolean");
      out = it->get<bool>();
      return absl::OkStatus();
    };
    auto type = text("type", true);
    if (!type.ok()) return type.status();
    if (*type != "alias" && *type != "phoneme") {
      return invalid("\"type\" must be \"alias\" or \"phoneme\", not " + core::Quoted(*type));
    }
    Lexeme lexeme;
    auto grapheme = text("string_to_replace", true);
    if (!grapheme.ok()) return grapheme.status();
    lexeme.graphemes.push_back(*std::move(grapheme));
    auto alias = text("alias", *type == "alias");
    if (!alias.ok()) return alias.status();
    lexeme.alias = *std::move(alias);
    if (*type == "phoneme") {
      auto ipa = text("phoneme", true);
      if (!ipa.ok()) return ipa.status();
      lexeme.ipa = *std::move(ipa);
      auto alphabet = text("alphabet", false);
      if (!alphabet.ok()) return alphabet.status();
      if (!alphabet->empty() && *alphabet != "ipa") {
        return invalid("alphabet " + core::Quoted(*alphabet) +
                       " is not supported: voxserve speaks IPA phonemes (\"alphabet\": \"ipa\")");
      }
    }
    if (absl::Status status = flag("case_sensitive", lexeme.case_sensitive); !status.ok()) {
      return status;
    }
    if (absl::Status status = flag("word_boundaries", lexeme.word_boundaries); !status.ok()) {
      return status;
    }
    lexemes.push_back(std::move(lexeme));
  }
  return lexemes;
}

std::string RulesJson(const Lexicon& lexicon) {
  nlohmann::json rules = nlohmann::json::array();
  for (const Lexeme& lexeme : lexicon.lexemes) {
    for (const std::string& grapheme : lexeme.graphemes) {
      nlohmann::json rule = {{"string_to_replace", grapheme},
                             {"case_sensitive", lexeme.case_sensitive},
                             {"word_boundaries", lexeme.word_boundaries}};
      if (lexeme.ipa.empty()) {
        rule["type"] = "alias";
        rule["alias"] = lexeme.alias;
      } else {
        rule["type"] = "phoneme";
        rule["phoneme"] = lexeme.ipa;
        rule["alphabet"] = "ipa";
        if (!lexeme.alias.empty()) rule["alias"] = lexeme.alias;
      }
      rules.push_back(std::move(rule));
    }
  }
  return rules.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

std::string XmlEscaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

std::string WritePls(const Lexicon& lexicon) {
  std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<lexicon version=\"1.0\" xmlns=\"http://www.w3.org/2005/01/pronunciation-lexicon\"\n"
      "         alphabet=\"ipa\" xml:lang=\"" +
      XmlEscaped(lexicon.language.empty() ? "en-US" : lexicon.language) + "\">\n";
  for (const Lexeme& lexeme : lexicon.lexemes) {
    xml += "  <lexeme>\n";
    for (const std::string& grapheme : lexeme.graphemes) {
      xml += "    <grapheme>" + XmlEscaped(grapheme) + "</grapheme>\n";
    }
    if (!lexeme.ipa.empty()) xml += "    <phoneme>" + XmlEscaped(lexeme.ipa) + "</phoneme>\n";
    if (!lexeme.alias.empty()) xml += "    <alias>" + XmlEscaped(lexeme.alias) + "</alias>\n";
    xml += "  </lexeme>\n";
  }
  xml += "</lexicon>\n";
  return xml;
}

std::vector<ssml::SpeechItem> Apply(const std::vector<ssml::SpeechItem>& items,
                                    std::span<const Lexicon* const> lexicons, bool speaks_ipa) {
  const Index index(lexicons);
  if (index.empty()) return items;
  std::vector<ssml::SpeechItem> out;
  out.reserve(items.size());
  for (const ssml::SpeechItem& item : items) {
    if (item.kind != ssml::SpeechItem::Kind::kText || item.verbatim || !item.phonemes.empty()) {
      out.push_back(item);
      continue;
    }
    RewriteItem(item, index, speaks_ipa, out);
  }
  return out;
}

}  // namespace voxserve::text::lexicon
