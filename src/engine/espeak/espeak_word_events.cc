#include "engine/espeak/espeak_word_events.h"

#include <algorithm>
#include <cmath>

namespace voxserve::engine {
namespace {

// A sample quieter than this is silence when trimming a word's tail: -46 dBFS, below espeak-ng's
// quietest voiced frames (about -40 dBFS measured over 20 ms) and above its pauses (exact zeros).
constexpr float kSilenceLevel = 0.005f;

// Byte offset of each code point of `text`, then text.size(): code point i is
// [offsets[i], offsets[i + 1]).
std::vector<size_t> CodePointOffsets(std::string_view text) {
  std::vector<size_t> offsets;
  for (size_t at = 0; at < text.size(); ++at) {
    if ((static_cast<unsigned char>(text[at]) & 0xC0) != 0x80) offsets.push_back(at);
  }
  offsets.push_back(text.size());
  return offsets;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

bool IsTrailingPunctuation(char c) {
  return c == '.' || c == ',' || c == ';' || c == ':' || c == '!' || c == '?' || c == '"' ||
         c == '\'' || c == ')';
}

}  // namespace

std::vector<audio::WordTiming> WordTimingsFromEvents(std::string_view text,
                                                     std::span<const EspeakWordEvent> events,
                                                     std::span<const float> samples,
                                                     int sample_rate) {
  std::vector<audio::WordTiming> words;
  if (sample_rate <= 0) return words;
  const std::vector<size_t> offsets = CodePointOffsets(text);
  const size_t code_points = offsets.size() - 1;
  const double duration = static_cast<double>(samples.size()) / sample_rate;
  for (const EspeakWordEvent& event : events) {
    if (event.length <= 0 || event.text_position <= 0) continue;
    size_t first = std::min(static_cast<size_t>(event.text_position - 1), code_points);
    size_t last = std::min(first + static_cast<size_t>(event.length), code_points);
    if (first == last) continue;
    audio::WordTiming word;
    word.text_begin = offsets[first];
    word.text_end = offsets[last];
    word.start_s = std::clamp(event.audio_ms / 1000.0, 0.0, duration);
    if (!words.empty() && word.text_begin < words.back().text_end) {
      // Reported at a position already passed: it is the next word of the text after the
      // previous one (a run of non-spaces, less its trailing punctuation).
      size_t begin = words.back().text_end;
      while (begin < text.size() && IsSpace(text[begin])) ++begin;
      size_t end = begin;
      while (end < text.size() && !IsSpace(text[end])) ++end;
      while (end > begin && IsTrailingPunctuation(text[end - 1])) --end;
      if (begin == end) continue;
      word.text_begin = begin;
      word.text_end = end;
    }
    if (!words.empty()) word.start_s = std::max(word.start_s, words.back().start_s);
    words.push_back(word);
  }
  for (size_t i = 0; i < words.size(); ++i) {
    double limit = i + 1 < words.size() ? words[i + 1].start_s : duration;
    size_t begin = static_cast<size_t>(std::llround(words[i].start_s * sample_rate));
    size_t end = std::min(static_cast<size_t>(std::llround(limit * sample_rate)), samples.size());
    while (end > begin && std::fabs(samples[end - 1]) < kSilenceLevel) --end;
    words[i].end_s =
        std::max(words[i].start_s, std::min(limit, static_cast<double>(end) / sample_rate));
  }
  return words;
}

}  // namespace voxserve::engine
