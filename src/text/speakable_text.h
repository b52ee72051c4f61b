// What of a client's text an engine can speak. Decided here, once, for every transport: the
// service applies it to each request before the text is split.
#pragma once

#include <string>
#include <string_view>

namespace voxserve::text {

// `valid_utf8` with every control character (Unicode Cc: NUL, ESC, DEL, ...) other than the
// whitespace ones (tab, line feeds, carriage return) replaced by a space. Engines take C strings
// (espeak-ng's API, the phonemizers), so an embedded NUL would silently end the text there; a
// space keeps the words on either side apart.
std::string ControlCharactersAsSpaces(std::string_view valid_utf8);

// True when `valid_utf8` holds at least one letter, digit or symbol (Unicode L*, N*, S*): what
// an engine says something for. Punctuation, whitespace, control, format (zero-width),
// private-use and unassigned characters alone synthesize only silence.
bool HasSpeakableCharacters(std::string_view valid_utf8);

}  // namespace voxserve::text
