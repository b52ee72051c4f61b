// SSML <say-as>: what a piece of text becomes when read as a number, a date, a time, a
// telephone number or letter by letter (docs/ssml.md lists the formats). English expansions;
// for other languages the spelling-type ones (characters, digits, telephone) still separate
// what is read, and the number-type ones leave the text to the engine's own reading.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace voxserve::text::ssml {

struct SayAs {
  std::string interpret_as;     // "characters", "spell-out", "cardinal", "number", "ordinal",
                                // "digits", "date", "time", "telephone"
  std::string format;           // date: "mdy", "dmy", "ymd", "md", "dm", "ym", "my", "y", "m",
                                // "d"; time: "hms12", "hms24"
  std::string language = "en";  // primary subtag of the voice's (or xml:lang) language
};

// What to speak for `content`. Text that does not fit the interpretation (letters as a
// cardinal, 13 as a month) is spoken as it is, as is content of an unknown interpretation.
std::string ExpandSayAs(const SayAs& say_as, std::string_view content);

// English number words: 21 → "twenty-one", ordinal 21 → "twenty-first". Up to
// 999,999,999,999,999 (longer digit strings are read digit by digit by the callers).
std::string EnglishCardinal(uint64_t value);
std::string EnglishOrdinal(uint64_t value);

}  // namespace voxserve::text::ssml
