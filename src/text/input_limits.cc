#include "text/input_limits.h"

#include "absl/strings/str_format.h"
#include "core/error.h"
#include "text/speakable_text.h"
#include "text/utf8.h"

namespace voxserve::text {

absl::Status CheckInput(std::string_view text, const InputLimits& limits, std::string_view param) {
  if (absl::Status valid = ValidateUtf8(text, param); !valid.ok()) return valid;
  if (TrimWhitespace(text).empty()) {
    return core::InvalidArgument(absl::StrFormat("'%s' is empty or only whitespace", param), param,
                                 "empty_input");
  }
  if (!HasSpeakableCharacters(text)) {
    return core::InvalidArgument(
        absl::StrFormat("'%s' has nothing to speak: no letter, digit or symbol, only punctuation, "
                        "control or invisible characters",
                        param),
        param, "empty_input");
  }
  const std::size_t chars = CountCodePoints(text);
  if (chars > limits.max_input_chars) {
    return core::PayloadTooLarge(absl::StrFormat("'%s' has %d characters; the limit is %d", param,
                                                 chars, limits.max_input_chars),
                                 param);
  }
  return absl::OkStatus();
}

}  // namespace voxserve::text
