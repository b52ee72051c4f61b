#include "store/dictionary_file.h"

#include <cstdint>
#include <memory>
#include <set>
#include <utility>

#include "core/error.h"
#include "nlohmann/json.hpp"
#include "text/utf8.h"

namespace voxserve::store {
namespace {

using json = nlohmann::json;
using text::lexicon::Lexeme;
using text::lexicon::Lexicon;
using text::lexicon::LexiconLimits;

// Raised when a field changes meaning; older servers refuse newer. Format 1: every version
// inline (the postgres row's body). Format 2: the dir store's metadata file.
constexpr int kFormat = 1;
constexpr int kMetadataFormat = 2;

absl::Status Invalid(const std::string& message) {
  return core::InvalidArgument(message, {}, "invalid_dictionary");
}

json LexemeJson(const Lexeme& lexeme) {
  return {{"graphemes", lexeme.graphemes},
          {"alias", lexeme.alias},
          {"ipa", lexeme.ipa},
          {"case_sensitive", lexeme.case_sensitive},
          {"word_boundaries", lexeme.word_boundaries}};
}

// The member `key` of `object` when `has_type` holds for it; InvalidArgument naming `where`,
// the key and `type_name` otherwise.
template <typename HasType>
absl::StatusOr<const json*> Member(const json& object, std::string_view key,
                                   std::string_view type_name, const std::string& where,
                                   HasType has_type) {
  auto it = object.find(key);
  if (it == object.end() || !has_type(*it)) {
    return Invalid(where + ": \"" + std::string(key) + "\" is missing or not " +
                   std::string(type_name));
  }
  return &*it;
}

absl::StatusOr<const json*> ArrayMember(const json& object, std::string_view key,
                                        const std::string& where) {
  return Member(object, key, "an array", where, [](const json& v) { return v.is_array(); });
}

absl::StatusOr<std::string> StringMember(const json& object, std::string_view key,
                                         const std::string& where) {
  auto member = Member(object, key, "a string", where, [](const json& v) { return v.is_string(); });
  if (!member.ok()) return member.status();
  return (*member)->get<std::string>();
}

absl::StatusOr<int64_t> IntegerMember(const json& object, std::string_view key,
                                      const std::string& where) {
  // nlohmann reads a non-negative integer as unsigned: past INT64_MAX it is out of range.
  auto member = Member(object, key, "an integer", where, [](const json& v) {
    return v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX);
  });
  if (!member.ok()) return member.status();
  return (*member)->get<int64_t>();
}

absl::StatusOr<bool> BoolMember(const json& object, std::string_view key,
                                const std::string& where) {
  auto member =
      Member(object, key, "true or false", where, [](const json& v) { return v.is_boolean(); });
  if (!member.ok()) return member.status();
  return (*member)->get<bool>();
}

absl::StatusOr<Lexeme> DecodeLexeme(const json& value, const std::string& where) {
  if (!value.is_object()) return Invalid(where + " is not an object");
  Lexeme lexeme;
  auto graphemes = ArrayMember(value, "graphemes", where);
  if (!graphemes.ok()) return graphemes.status();
  for (const json& grapheme : **graphemes) {
    if (!grapheme.is_string()) return Invalid(where + ": a grapheme is not a string");
    lexeme.graphemes.push_back(grapheme.get<std::string>());
  }
  auto alias = StringMember(value, "alias", where);
  auto ipa = StringMember(value, "ipa", where);
  auto case_sensitive = BoolMember(value, "case_sensitive", where);
  auto word_boundaries = BoolMember(value, "word_boundaries", where);
  for (const absl::Status& status :
       {alias.status(), ipa.status(), case_sensitive.status(), word_boundaries.status()}) {
    if (!status.ok()) return status;
  }
  lexeme.alias = *std::move(alias);
  lexeme.ipa = *std::move(ipa);
  lexeme.case_sensitive = *case_sensitive;
  lexeme.word_boundaries = *word_boundaries;
  return lexeme;
}

// A version's id and time (both formats).
absl::StatusOr<DictionaryVersion> DecodeVersionHeader(const json& value, const std::string& where) {
  if (!value.is_object()) return Invalid(where + " is not an object");
  DictionaryVersion version;
  auto version_id = StringMember(value, "version_id", where);
  if (!version_id.ok()) return version_id.status();
  if (!HasDictionaryIdShape(*version_id, kDictionaryVersionIdPrefix)) {
    return Invalid(where + ": not a version id: " + core::Quoted(*version_id));
  }
  version.version_id = *std::move(version_id);
  auto created_at = IntegerMember(value, "created_at", where);
  if (!created_at.ok()) return created_at.status();
  version.created_at = *created_at;
  return version;
}

// {"language": …, "lexemes": […]} (a format 1 version, or a format 2 lexicon file).
absl::StatusOr<Lexicon> DecodeLexiconBody(const json& value, const std::string& where,
                                          const LexiconLimits& limits) {
  if (!value.is_object()) return Invalid(where + " is not an object");
  Lexicon lexicon;
  auto language = StringMember(value, "language", where);
  if (!language.ok()) return language.status();
  lexicon.language = *std::move(language);
  auto lexemes = ArrayMember(value, "lexemes", where);
  if (!lexemes.ok()) return lexemes.status();
  // Checked before decoding, so a huge file costs no more than the limit's worth of lexemes.
  if ((*lexemes)->size() > limits.max_rules) {
    return Invalid(where + ": more than " + std::to_string(limits.max_rules) + " lexemes");
  }
  for (size_t i = 0; i < (*lexemes)->size(); ++i) {
    auto lexeme = DecodeLexeme((**lexemes)[i], where + " lexemes[" + std::to_string(i) + "]");
    if (!lexeme.ok()) return lexeme.status();
    lexicon.lexemes.push_back(*std::move(lexeme));
  }
  if (absl::Status status = ValidateStoredLexicon(lexicon, limits); !status.ok()) {
    return Invalid(where + ": " + std::string(status.message()));
  }
  return lexicon;
}

json LexiconBodyJson(const Lexicon& lexicon) {
  json lexemes = json::array();
  for (const Lexeme& lexeme : lexicon.lexemes) lexemes.push_back(LexemeJson(lexeme));
  return {{"language", lexicon.language}, {"lexemes", std::move(lexemes)}};
}

// Strict: a string that is not UTF-8 would be a bug upstream, and replacing its bytes here would
// change the dictionary silently. The stores validate every string before this.
std::string Dumped(const json& value) {
  return value.dump(-1, ' ', /*ensure_ascii=*/false, json::error_handler_t::strict);
}

absl::StatusOr<json> ParsedObject(std::string_view bytes) {
  json file = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (file.is_discarded()) return Invalid("not JSON");
  if (!file.is_object()) return Invalid("not a JSON object");
  return file;
}

// The metadata both formats share: format (checked to be `format`), id, name, description,
// created_at, archived_at.
absl::Status DecodeMetadata(const json& file, int format, DictionaryRecord& record) {
  auto found = IntegerMember(file, "format", "the file");
  if (!found.ok()) return found.status();
  if (*found != format) {
    return Invalid("format " + std::to_string(*found) + " where format " + std::to_string(format) +
                   " was expected");
  }
  auto id = StringMember(file, "id", "the file");
  auto name = StringMember(file, "name", "the file");
  auto description = StringMember(file, "description", "the file");
  auto created_at = IntegerMember(file, "created_at", "the file");
  for (const absl::Status& status :
       {id.status(), name.status(), description.status(), created_at.status()}) {
    if (!status.ok()) return status;
  }
  if (!HasDictionaryIdShape(*id, kDictionaryIdPrefix)) {
    return Invalid("not a dictionary id: " + core::Quoted(*id));
  }
  record.id = *std::move(id);
  record.name = *std::move(name);
  record.description = *std::move(description);
  record.created_at = *created_at;
  auto archived = file.find("archived_at");
  if (archived == file.end()) return Invalid("the file: \"archived_at\" is missing");
  if (!archived->is_null()) {
    auto archived_at = IntegerMember(file, "archived_at", "the file");
    if (!archived_at.ok()) return archived_at.status();
    record.archived_at = *archived_at;
  }
  return absl::OkStatus();
}

json MetadataJson(const DictionaryRecord& record, int format, json versions) {
  return {{"format", format},
          {"id", record.id},
          {"name", record.name},
          {"description", record.description},
          {"created_at", record.created_at},
          {"archived_at", record.archived_at ? json(*record.archived_at) : json(nullptr)},
          {"versions", std::move(versions)}};
}

// The versions of `file`, each read by `decode`; no versions or a repeated id is refused.
template <typename Decode>
absl::Status DecodeVersions(const json& file, DictionaryRecord& record, Decode decode) {
  auto versions = ArrayMember(file, "versions", "the file");
  if (!versions.ok()) return versions.status();
  if ((*versions)->empty()) return Invalid("the file has no versions");
  std::set<std::string, std::less<>> version_ids;
  for (size_t i = 0; i < (*versions)->size(); ++i) {
    const std::string where = "versions[" + std::to_string(i) + "]";
    auto version = DecodeVersionHeader((**versions)[i], where);
    if (!version.ok()) return version.status();
    if (absl::Status status = decode((**versions)[i], where, *version); !status.ok()) {
      return status;
    }
    if (!version_ids.insert(version->version_id).second) {
      return Invalid("version " + version->version_id + " appears twice");
    }
    record.versions.push_back(*std::move(version));
  }
  return absl::OkStatus();
}

}  // namespace

bool HasDictionaryIdShape(std::string_view id, std::string_view prefix) {
  if (id.size() != prefix.size() + kDictionaryIdHexDigits || !id.starts_with(prefix)) {
    return false;
  }
  for (char c : id.substr(prefix.size())) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool DictionaryRecord::operator==(const DictionaryRecord& other) const {
  if (id != other.id || name != other.name || description != other.description ||
      created_at != other.created_at || archived_at != other.archived_at ||
      versions.size() != other.versions.size()) {
    return false;
  }
  for (size_t i = 0; i < versions.size(); ++i) {
    const DictionaryVersion& a = versions[i];
    const DictionaryVersion& b = other.versions[i];
    if (a.version_id != b.version_id || a.created_at != b.created_at ||
        (a.lexicon == nullptr) != (b.lexicon == nullptr) ||
        (a.lexicon != nullptr && !(*a.lexicon == *b.lexicon))) {
      return false;
    }
  }
  return true;
}

absl::Status ValidateStoredLexicon(const Lexicon& lexicon, const LexiconLimits& limits) {
  if (lexicon.lexemes.size() > limits.max_rules) {
    return Invalid("more than " + std::to_string(limits.max_rules) + " lexemes");
  }
  auto utf8 = [](std::string_view text, const std::string& what) -> absl::Status {
    if (!text::ValidateUtf8(text, what).ok()) return Invalid(what + " is not valid UTF-8");
    return absl::OkStatus();
  };
  if (absl::Status status = utf8(lexicon.language, "the language"); !status.ok()) return status;
  const std::string bound = std::to_string(limits.max_grapheme_chars) + " bytes";
  for (size_t i = 0; i < lexicon.lexemes.size(); ++i) {
    const Lexeme& lexeme = lexicon.lexemes[i];
    const std::string where = "lexeme " + std::to_string(i + 1);
    if (lexeme.graphemes.empty()) return Invalid(where + " has no grapheme");
    for (const std::string& grapheme : lexeme.graphemes) {
      if (grapheme.empty() || grapheme.size() > limits.max_grapheme_chars) {
        return Invalid(where + ": a grapheme must hold 1 to " + bound);
      }
      if (absl::Status status = utf8(grapheme, where + "'s grapheme"); !status.ok()) return status;
    }
    if (lexeme.alias.empty() && lexeme.ipa.empty()) {
      return Invalid(where + " has neither an alias nor an IPA string");
    }
    for (const std::string* value : {&lexeme.alias, &lexeme.ipa}) {
      if (value->size() > limits.max_grapheme_chars) {
        return Invalid(where + ": an alias or IPA string is longer than " + bound);
      }
      if (absl::Status status = utf8(*value, where + "'s alias or IPA"); !status.ok()) {
        return status;
      }
    }
  }
  return absl::OkStatus();
}

std::string EncodeDictionaryFile(const DictionaryRecord& record) {
  json versions = json::array();
  for (const DictionaryVersion& version : record.versions) {
    json entry = LexiconBodyJson(*version.lexicon);
    entry["version_id"] = version.version_id;
    entry["created_at"] = version.created_at;
    versions.push_back(std::move(entry));
  }
  return Dumped(MetadataJson(record, kFormat, std::move(versions)));
}

absl::StatusOr<DictionaryRecord> DecodeDictionaryFile(std::string_view bytes,
                                                      const LexiconLimits& limits) {
  auto file = ParsedObject(bytes);
  if (!file.ok()) return file.status();
  DictionaryRecord record;
  if (absl::Status status = DecodeMetadata(*file, kFormat, record); !status.ok()) return status;
  if (absl::Status status = DecodeVersions(
          *file, record,
          [&](const json& value, const std::string& where, DictionaryVersion& version) {
            auto lexicon = DecodeLexiconBody(value, where, limits);
            if (!lexicon.ok()) return lexicon.status();
            version.lexicon = std::make_shared<const Lexicon>(*std::move(lexicon));
            return absl::OkStatus();
          });
      !status.ok()) {
    return status;
  }
  return record;
}

std::string EncodeDictionaryMetadata(const DictionaryRecord& record) {
  json versions = json::array();
  for (const DictionaryVersion& version : record.versions) {
    versions.push_back({{"version_id", version.version_id},
                        {"created_at", version.created_at},
                        {"bytes", version.bytes}});
  }
  return Dumped(MetadataJson(record, kMetadataFormat, std::move(versions)));
}

absl::StatusOr<DictionaryRecord> DecodeDictionaryMetadata(std::string_view bytes) {
  auto file = ParsedObject(bytes);
  if (!file.ok()) return file.status();
  DictionaryRecord record;
  if (absl::Status status = DecodeMetadata(*file, kMetadataFormat, record); !status.ok()) {
    return status;
  }
  if (absl::Status status = DecodeVersions(
          *file, record,
          [](const json& value, const std::string& where, DictionaryVersion& version) {
            auto size = IntegerMember(value, "bytes", where);
            if (!size.ok()) return size.status();
            if (*size < 0) return Invalid(where + ": \"bytes\" is negative");
            version.bytes = static_cast<size_t>(*size);
            return absl::OkStatus();
          });
      !status.ok()) {
    return status;
  }
  return record;
}

std::string EncodeLexiconFile(const Lexicon& lexicon) { return Dumped(LexiconBodyJson(lexicon)); }

absl::StatusOr<Lexicon> DecodeLexiconFile(std::string_view bytes, const LexiconLimits& limits) {
  auto file = ParsedObject(bytes);
  if (!file.ok()) return file.status();
  return DecodeLexiconBody(*file, "the lexicon", limits);
}

absl::StatusOr<int> DictionaryFileFormat(std::string_view bytes) {
  auto file = ParsedObject(bytes);
  if (!file.ok()) return file.status();
  auto format = IntegerMember(*file, "format", "the file");
  if (!format.ok()) return format.status();
  if (*format != kFormat && *format != kMetadataFormat) {
    return Invalid("format " + std::to_string(*format) + " (this server reads formats " +
                   std::to_string(kFormat) + " and " + std::to_string(kMetadataFormat) + ")");
  }
  return static_cast<int>(*format);
}

}  // namespace voxserve::store
