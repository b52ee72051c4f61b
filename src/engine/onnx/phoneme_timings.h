// Word timings for the ONNX voices (Piper, Kokoro): the phonemes a graph spoke, each with its
// length in samples (from the graph's duration output, or an even share of the audio when it has
// none), grouped into words at the phonemizer's word boundaries (spaces) and mapped back onto the
// words of the segment text.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "audio/pcm.h"

namespace voxserve::engine::onnx {

// One phoneme (or boundary, pad, pause: U' ') in the order spoken, and how long it sounded.
struct TimedPhoneme {
  char32_t phoneme = U' ';
  double samples = 0;
};

// The words of `text` and their times (seconds at `sample_rate`) for `phonemes` spoken in order
// from sample 0. Phoneme words are runs between spaces holding a non-punctuation phoneme; text
// words are runs between spaces holding a letter or digit (their edge punctuation left out).
// When both counts agree, word i of the text is phoneme word i, and `kind` is kExact if the
// phoneme lengths were (`exact`), else kEstimated. When they disagree (espeak-ng reads "42" as two
// words, "Mr." as one...) the phonemes' span is shared out among the text words by their code
// points: kEstimated.
struct PhonemeWordTimings {
  std::vector<audio::WordTiming> words;
  audio::TimingsKind kind = audio::TimingsKind::kNone;
};
PhonemeWordTimings WordTimingsFromPhonemes(std::string_view text,
                                           std::span<const TimedPhoneme> phonemes, int sample_rate,
                                           bool exact);

// Shares `samples` evenly among `phonemes` (in place): the estimate for a graph that reports no
// durations, in proportion to phoneme counts.
void ShareEvenly(std::span<TimedPhoneme> phonemes, double samples);

}  // namespace voxserve::engine::onnx
