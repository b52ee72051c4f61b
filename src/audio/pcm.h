// Mono PCM audio as engines produce it and encoders consume it, with the word timings an engine
// may report for the text it spoke (docs/timings.md).
#pragma once

#include <cstddef>
#include <vector>

namespace voxserve::audio {

// How a segment's word timings were obtained.
enum class TimingsKind {
  kNone,       // the engine reports none
  kEstimated,  // shared out in proportion (e.g. to phoneme counts): good for captions, not lips
  kExact,      // from the synthesizer itself (espeak-ng's word events, a graph's durations)
};

// One word of a segment's text and where it sounds. Offsets are bytes of the segment text the
// engine was given; times are seconds from the start of this audio (a segment's, or once the
// service has shifted them, a request's). end_s >= start_s.
struct WordTiming {
  size_t text_begin = 0;
  size_t text_end = 0;  // exclusive
  double start_s = 0;
  double end_s = 0;
};

// Owned by value; moved along the pipeline (engine → scheduler → service → encoder). `words`
// travel with the samples: a whole-segment engine sets them on its one result; a streaming
// engine may set them on any chunk (each chunk's words are in segment time, not chunk time).
struct PcmAudio {
  std::vector<float> samples;  // mono, nominally in [-1, 1]; encoders clip what lies outside
  int sample_rate = 0;
  std::vector<WordTiming> words;  // in text order; empty when timings == kNone
  TimingsKind timings = TimingsKind::kNone;

  double DurationSeconds() const {
    return sample_rate > 0 ? static_cast<double>(samples.size()) / sample_rate : 0.0;
  }
};

// Scales the times of `words` by `factor` (a time stretch by 1/speed makes audio 1/speed as
// long: factor = 1/speed).
inline void ScaleWordTimes(std::vector<WordTiming>& words, double factor) {
  for (WordTiming& word : words) {
    word.start_s *= factor;
    word.end_s *= factor;
  }
}

// Appends a streaming engine's chunk to the audio collected so far of the same segment: its
// samples, and its words (already in segment time). The kind is the first one reported.
inline void AppendChunk(PcmAudio& into, PcmAudio chunk) {
  if (chunk.sample_rate > 0) into.sample_rate = chunk.sample_rate;
  into.samples.insert(into.samples.end(), chunk.samples.begin(), chunk.samples.end());
  into.words.insert(into.words.end(), chunk.words.begin(), chunk.words.end());
  if (into.timings == TimingsKind::kNone) into.timings = chunk.timings;
}

}  // namespace voxserve::audio
