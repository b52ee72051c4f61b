// Characters that show nothing where they stand: names a person reads and tells apart (a cloned
// voice's name) must not hold them, or two names that look the same would be different names.
#pragma once

#include <cstddef>
#include <optional>
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

}  // namespace voxserve::text
