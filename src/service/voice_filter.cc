#include "service/voice_filter.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace voxserve::service {
namespace {

// ISO 639-3 macrolanguages with the individual languages TTS engines list voices under
// (espeak-ng: cmn, yue, hak; Piper and Kokoro use the macrolanguage codes themselves). From the
// SIL ISO 639-3 macrolanguage mappings, limited to languages with voices in those engines.
constexpr std::array<std::pair<std::string_view, std::string_view>, 21> kMacrolanguageMembers = {{
    {"zh", "cmn"}, {"zh", "yue"}, {"zh", "hak"}, {"zh", "nan"}, {"zh", "wuu"}, {"zh", "gan"},
    {"zh", "hsn"}, {"ar", "arb"}, {"fa", "pes"}, {"ms", "zsm"}, {"no", "nb"},  {"no", "nn"},
    {"sw", "swh"}, {"lv", "lvs"}, {"et", "ekk"}, {"sq", "als"}, {"uz", "uzn"}, {"ku", "kmr"},
    {"ne", "npi"}, {"mn", "khk"}, {"om", "gaz"},
}};

std::string Normalized(std::string_view tag) {
  std::string out(tag);
  for (char& c : out) {
    c = c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// `tag` is `range` or a narrower tag of it (RFC 4647 basic filtering).
bool IsWithin(std::string_view tag, std::string_view range) {
  return tag == range ||
         (tag.size() > range.size() && tag.starts_with(range) && tag[range.size()] == '-');
}

}  // namespace

bool LanguageMatches(std::string_view voice_language, std::string_view wanted) {
  const std::string voice = Normalized(voice_language);
  const std::string range = Normalized(wanted);
  if (range.empty() || IsWithin(voice, range)) return true;
  std::string_view primary = std::string_view(voice).substr(0, voice.find('-'));
  return std::any_of(
      kMacrolanguageMembers.begin(), kMacrolanguageMembers.end(),
      [&](const auto& member) { return member.first == range && member.second == primary; });
}

}  // namespace voxserve::service
