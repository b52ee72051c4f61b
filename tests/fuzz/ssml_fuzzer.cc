// text::ssml::ParseSsml and the <say-as> expansions on arbitrary bytes: every input either
// parses into items whose text is valid UTF-8 (and whose breaks stay within the bound) or is
// refused with InvalidArgument; never a crash, a hang or an entity expansion.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "text/ssml/say_as.h"
#include "text/ssml/ssml_document.h"
#include "text/utf8.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace voxserve::text;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  // The service checks UTF-8 first (text::CheckInput); the parser must survive both anyway.
  auto items = ssml::ParseSsml(input);
  if (items.ok()) {
    for (const ssml::SpeechItem& item : *items) {
      if (!ValidateUtf8(item.text, "text").ok()) std::abort();
      if (item.break_seconds < 0 || item.break_seconds > 10.0) std::abort();
      if (!(item.rate > 0)) std::abort();
    }
  } else if (items.status().code() != absl::StatusCode::kInvalidArgument) {
    std::abort();  // PayloadTooLarge is an InvalidArgument too (core/error.h)
  }
  if (ValidateUtf8(input, "text").ok() && size < 256) {
    for (const char* kind :
         {"characters", "cardinal", "ordinal", "digits", "date", "time", "telephone"}) {
      ssml::SayAs say_as;
      say_as.interpret_as = kind;
      const std::string spoken = ssml::ExpandSayAs(say_as, input);
      if (spoken.size() > 64 * size + 64) std::abort();  // expansions stay proportionate
    }
  }
  return 0;
}
