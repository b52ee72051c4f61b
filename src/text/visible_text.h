// Characters that show nothing where they stand: names a person reads and tells apart (a cloned
// voice's name) must not hold them, or two names that look the same would be different names.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace voxserve::text {

struct InvisibleCharacter {
  char32_t code_point = 0;
  size_t index = 0;  // in code points from the start, 0-based
};

// The first character of `valid_utf8` that is invisible or reorders what is around it: controls
// (Cc), format characters (Cf: zero-width space and joiners, the bidi embeddings, overrides and
// isolates, word joiner, BOM, soft hyphen), bidi controls, other default-ignorable characters
// (variation selectors, Hangul fillers), line and paragraph separators, private-use and
// unassigned code points. ICU's character properties decide (Unicode's own data).
std::optional<InvisibleCharacter> FirstInvisibleCharacter(std::string_view valid_utf8);

// Why `valid_utf8` cannot be matched or spoken as dictionary text (a grapheme, an alias, a
// phoneme), empty when it can: a control character (a NUL cuts an engine's C string short), or
// nothing visible at all (a grapheme of zero-width spaces would match where nobody sees a word).
// Invisible characters between visible ones stay allowed: ZWNJ and ZWJ belong in Persian, Indic
// and emoji text.
std::string UnspeakableTextProblem(std::string_view valid_utf8);

// The form two names that read the same share: Unicode's NFKC_Casefold of `valid_utf8` (NFKC
// with case folding, ICU's tables). "é" and "e" + U+0301, "Ｒace2" (fullwidth) and "race2", "ﬁ"
// and "FI" give one key. ASCII text folds to its lower case. Invalid UTF-8 is returned as is.
std::string LookAlikeKey(std::string_view valid_utf8);

}  // namespace voxserve::text
