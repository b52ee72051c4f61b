// Word and character timings derived in the service (docs/timings.md): an estimate for engines
// that report no word timings, and character timings built from word timings for protocols that
// report characters (ElevenLabs' `alignment`, voxserve's "timestamps": "char"). This is the one
// place that guesses.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "audio/pcm.h"
#include "service/synthesis_request.h"

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

// The same alignment of `text` (a sentence), from its segments' word timings where they cover
// it: each segment's text is found in `text` in order, a word's characters share its span
// evenly and the characters between words (spaces, punctuation) share the gap between them.
// Falls back to the even estimate above when `timings` is empty or a segment is not found.
CharacterAlignment EstimateAlignment(std::string_view text, double start_seconds,
                                     double duration_seconds,
                                     std::span<const SegmentTimings> timings);

// Words of `text` (runs of non-space characters) spread over [0, duration_seconds) in proportion
// to their code points, for an engine that reports no timings: speech takes roughly constant time
// per letter, and the pauses at spaces are ignored.
std::vector<audio::WordTiming> EstimateWordTimings(std::string_view text, double duration_seconds);

// Character timings within one segment from its word timings (times as in `words`): characters
// of word w share [w.start_s, w.end_s) evenly; those before the first word, between words and
// after the last share the gaps (the segment spans [start_s, end_s)).
CharacterAlignment AlignCharacters(std::string_view text, std::span<const audio::WordTiming> words,
                                   double start_s, double end_s);

// One entry of a timestamps list as transports render it: a word or a character of a segment
// and where it sounds (in the request's audio, as the segment's times are).
struct TimedText {
  std::string text;
  double start_s = 0;
  double end_s = 0;
};
std::vector<TimedText> WordEntries(const SegmentTimings& segment);
// Every code point of the segment's text, spaces and punctuation included (AlignCharacters).
std::vector<TimedText> CharacterEntries(const SegmentTimings& segment);

}  // namespace voxserve::service
