// Turns espeak-ng's word events (espeak_EVENT of type espeakEVENT_WORD, delivered with the audio
// by its synth callback) into word timings: exact starts, from the synthesizer's own clock.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "audio/pcm.h"

namespace voxserve::engine {

// One espeakEVENT_WORD as the library reports it (speak_lib.h): a 1-based position and a length
// in characters (code points) of the UTF-8 text given to espeak_Synth, and the time in ms
// within the audio of that call.
struct EspeakWordEvent {
  int text_position = 0;
  int length = 0;
  int audio_ms = 0;
};

// Word timings for `text` spoken as `samples` (at `sample_rate`). A word starts at its event
// and ends where the next word starts (or the audio ends), less the silence before that point
// (a clause pause after a comma belongs to no word). espeak-ng 1.51 sometimes reports a word of
// a multi-word dictionary entry ("déjà vu") at a position before the one it already passed, and
// empty words at clause ends: the first is taken to be the text's next word after the previous
// one, the second is dropped, so the result is in text order, never overlapping, starts never
// decreasing.
std::vector<audio::WordTiming> WordTimingsFromEvents(std::string_view text,
                                                     std::span<const EspeakWordEvent> events,
                                                     std::span<const float> samples,
                                                     int sample_rate);

}  // namespace voxserve::engine
