#include "engine/onnx/phoneme_timings.h"

#include <algorithm>
#include <cstdint>

namespace voxserve::engine::onnx {
namespace {

bool IsSpace(char32_t c) { return c == U' ' || c == U'\t' || c == U'\n' || c == U'\r'; }

// Punctuation as Piper and Kokoro keep it in their phoneme strings (rhasspy/piper-phonemize's
// clause punctuation and Kokoro's vocabulary: ; : , . ! ? — … " ( ) “ ”), plus the ASCII rest.
bool IsPunctuation(char32_t c) {
  if (c >= 0x80) return c == U'—' || c == U'…' || c == U'“' || c == U'”' || c == U'«' || c == U'»';
  const bool alphanumeric =
      (c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z') || (c >= U'0' && c <= U'9');
  return !alphanumeric && c != U'\'' && !IsSpace(c);
}

bool IsWordByte(unsigned char c) {
  return c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

struct Span {
  double start = 0;
  double end = 0;
};

struct TextWord {
  size_t begin = 0;
  size_t end = 0;
  size_t code_points = 0;
};

std::vector<TextWord> TextWords(std::string_view text) {
  std::vector<TextWord> words;
  for (size_t at = 0; at < text.size();) {
    if (IsSpace(static_cast<unsigned char>(text[at]))) {
      ++at;
      continue;
    }
    size_t end = at;
    while (end < text.size() && !IsSpace(static_cast<unsigned char>(text[end]))) ++end;
    size_t first = at, last = end;
    while (first < last && !IsWordByte(static_cast<unsigned char>(text[first]))) ++first;
    while (last > first && !IsWordByte(static_cast<unsigned char>(text[last - 1]))) --last;
    if (first < last) {
      TextWord word{first, last, 0};
      for (size_t i = first; i < last; ++i) {
        if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++word.code_points;
      }
      words.push_back(word);
    }
    at = end;
  }
  return words;
}

}  // namespace

void ShareEvenly(std::span<TimedPhoneme> phonemes, double samples) {
  if (phonemes.empty()) return;
  const double share = samples / static_cast<double>(phonemes.size());
  for (TimedPhoneme& phoneme : phonemes) phoneme.samples = share;
}

PhonemeWordTimings WordTimingsFromPhonemes(std::string_view text,
                                           std::span<const TimedPhoneme> phonemes, int sample_rate,
                                           bool exact) {
  PhonemeWordTimings result;
  if (sample_rate <= 0) return result;
  std::vector<Span> spoken;
  bool open = false;
  double at = 0;
  for (const TimedPhoneme& phoneme : phonemes) {
    const double start = at;
    at += std::max(0.0, phoneme.samples);
    if (IsSpace(phoneme.phoneme)) {
      open = false;
      continue;
    }
    if (IsPunctuation(phoneme.phoneme)) continue;
    if (!open) spoken.push_back({start, at});
    open = true;
    spoken.back().end = at;
  }
  std::vector<TextWord> written = TextWords(text);
  if (spoken.empty() || written.empty()) return result;
  const double rate = sample_rate;
  if (spoken.size() == written.size()) {
    for (size_t i = 0; i < written.size(); ++i) {
      result.words.push_back(
          {written[i].begin, written[i].end, spoken[i].start / rate, spoken[i].end / rate});
    }
    result.kind = exact ? audio::TimingsKind::kExact : audio::TimingsKind::kEstimated;
    return result;
  }
  size_t total = 0;
  for (const TextWord& word : written) total += word.code_points;
  const double from = spoken.front().start, to = spoken.back().end;
  double time = from;
  for (const TextWord& word : written) {
    double length =
        (to - from) * static_cast<double>(word.code_points) / static_cast<double>(total);
    result.words.push_back({word.begin, word.end, time / rate, (time + length) / rate});
    time += length;
  }
  result.kind = audio::TimingsKind::kEstimated;
  return result;
}

}  // namespace voxserve::engine::onnx
