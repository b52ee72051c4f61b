// text::lexicon::ParseLexicon (W3C PLS or JSON) on arbitrary bytes, then the parsed dictionary
// applied to a fixed text: every input is either refused with InvalidArgument or gives a
// dictionary whose application yields valid UTF-8; never a crash, a hang or an entity expansion.
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
    return 0;
  }
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
