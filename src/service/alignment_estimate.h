// Character timings of a spoken sentence, for protocols that report them (ElevenLabs'
// `alignment`). ESTIMATED: engines do not report timings yet, so a sentence's audio is shared
// out among its characters in proportion (every character gets the same share). This is the one
// place that guesses; when engines report real timings they replace this function's result.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace voxserve::service {

struct CharacterAlignment {
  std::vector<std::string> characters;  // one UTF-8 code point each
  std::vector<double> start_seconds;
  std::vector<double> end_seconds;
};

// `text`'s code points spread evenly over [start_seconds, start_seconds + duration_seconds):
// character i of n spans duration * [i/n, (i+1)/n), shifted by start_seconds (the audio before
// this sentence in the same request). Invalid UTF-8 bytes count as one character each.
CharacterAlignment EstimateAlignment(std::string_view text, double start_seconds,
                                     double duration_seconds);

}  // namespace voxserve::service
