// text::lexicon::ParseLexicon (W3C PLS or JSON) and ParseRules (ElevenLabs' rule objects) on
// arbitrary bytes, then the parsed dictionary applied to a fixed text, case-sensitively and not:
// every input is either refused with InvalidArgument or gives a dictionary whose application
// yields valid UTF-8, and rules read back from RulesJson are the rules written; never a crash, a
// hang or an entity expansion.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "text/lexicon/lexicon.h"
#include "text/utf8.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace voxserve::text;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto lexicon = lexicon::ParseLexicon(input);
  if (!lexicon.ok()) {
    if (lexicon.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
    auto rules = lexicon::ParseRules(input);
    if (!rules.ok()) {
      if (rules.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
      return 0;
    }
    lexicon = lexicon::Lexicon{"", *std::move(rules)};
    auto again = lexicon::ParseRules(lexicon::RulesJson(*lexicon));
    if (!again.ok() || *again != lexicon->lexemes) std::abort();
  }
  // The same lexemes again without case or word boundaries, after the strict ones.
  const size_t strict = lexicon->lexemes.size();
  for (size_t i = 0; i < strict; ++i) {
    lexicon::Lexeme loose = lexicon->lexemes[i];
    loose.case_sensitive = loose.word_boundaries = false;
    lexicon->lexemes.push_back(std::move(loose));
  }
  (void)lexicon::WritePls(*lexicon);
  ssml::SpeechItem item;
  item.text = "The WWW and SQL, a tomato in New York; 我爱北京 café.";
  const lexicon::Lexicon* lexicons[] = {&*lexicon};
  for (bool speaks_ipa : {false, true}) {
    for (const ssml::SpeechItem& out : lexicon::Apply({item}, lexicons, speaks_ipa)) {
      // Graphemes and aliases came from expat or nlohmann: valid UTF-8, so the result is too.
      if (!ValidateUtf8(out.text, "text").ok() || !ValidateUtf8(out.phonemes, "ph").ok()) {
        std::abort();
      }
    }
  }
  return 0;
}
