#include "service/alignment_estimate.h"

#include <algorithm>

namespace voxserve::service {
namespace {

// The length of the UTF-8 sequence that starts with `lead` (1 for a stray continuation byte).
size_t SequenceLength(unsigned char lead) {
  if (lead >= 0xF0 && lead < 0xF8) return 4;
  if (lead >= 0xE0) return lead < 0xF0 ? 3 : 1;
  if (lead >= 0xC0) return 2;
  return 1;
}

// Byte ranges of the code points of text[begin, end).
std::vector<std::pair<size_t, size_t>> CodePoints(std::string_view text, size_t begin, size_t end) {
  std::vector<std::pair<size_t, size_t>> points;
  for (size_t at = begin; at < end;) {
    size_t length = std::min(SequenceLength(static_cast<unsigned char>(text[at])), end - at);
    points.emplace_back(at, at + length);
    at += length;
  }
  return points;
}

// Appends the code points of text[begin, end) spread evenly over [from, to).
void Spread(std::string_view text, size_t begin, size_t end, double from, double to,
            CharacterAlignment& out) {
  auto points = CodePoints(text, begin, end);
  const double n = static_cast<double>(points.size());
  to = std::max(to, from);
  for (size_t i = 0; i < points.size(); ++i) {
    out.characters.emplace_back(text.substr(points[i].first, points[i].second - points[i].first));
    out.start_seconds.push_back(from + (to - from) * (i / n));
    out.end_seconds.push_back(from + (to - from) * ((i + 1) / n));
  }
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

void Append(CharacterAlignment& into, CharacterAlignment part) {
  for (size_t i = 0; i < part.characters.size(); ++i) {
    into.characters.push_back(std::move(part.characters[i]));
    into.start_seconds.push_back(part.start_seconds[i]);
    into.end_seconds.push_back(part.end_seconds[i]);
  }
}

}  // namespace

CharacterAlignment EstimateAlignment(std::string_view text, double start_seconds,
                                     double duration_seconds) {
  CharacterAlignment alignment;
  Spread(text, 0, text.size(), start_seconds, start_seconds + duration_seconds, alignment);
  return alignment;
}

CharacterAlignment EstimateAlignment(std::string_view text, double start_seconds,
                                     double duration_seconds,
                                     std::span<const SegmentTimings> timings) {
  if (timings.empty()) return EstimateAlignment(text, start_seconds, duration_seconds);
  CharacterAlignment alignment;
  size_t cursor = 0;
  double time = start_seconds;
  for (const SegmentTimings& segment : timings) {
    size_t found = segment.text.empty() ? std::string_view::npos : text.find(segment.text, cursor);
    if (found == std::string_view::npos) {
      return EstimateAlignment(text, start_seconds, duration_seconds);
    }
    // What lies between segments (the spaces the splitter trimmed) is the silence between them.
    Spread(text, cursor, found, time, segment.start_s, alignment);
    Append(alignment, AlignCharacters(segment.text, segment.words, segment.start_s, segment.end_s));
    cursor = found + segment.text.size();
    time = segment.end_s;
  }
  Spread(text, cursor, text.size(), time, std::max(time, start_seconds + duration_seconds),
         alignment);
  return alignment;
}

std::vector<audio::WordTiming> EstimateWordTimings(std::string_view text, double duration_seconds) {
  std::vector<audio::WordTiming> words;
  size_t total = 0;
  for (size_t at = 0; at < text.size();) {
    if (IsSpace(text[at])) {
      ++at;
      continue;
    }
    size_t end = at;
    while (end < text.size() && !IsSpace(text[end])) ++end;
    words.push_back({at, end, 0, 0});
    total += CodePoints(text, at, end).size();
    at = end;
  }
  double time = 0;
  for (audio::WordTiming& word : words) {
    double share = static_cast<double>(CodePoints(text, word.text_begin, word.text_end).size()) /
                   static_cast<double>(total);
    word.start_s = time;
    time += duration_seconds * share;
    word.end_s = std::min(time, duration_seconds);
  }
  return words;
}

CharacterAlignment AlignCharacters(std::string_view text, std::span<const audio::WordTiming> words,
                                   double start_s, double end_s) {
  CharacterAlignment alignment;
  size_t cursor = 0;
  double time = start_s;
  for (const audio::WordTiming& word : words) {
    size_t begin = std::clamp(word.text_begin, cursor, text.size());
    size_t end = std::clamp(word.text_end, begin, text.size());
    Spread(text, cursor, begin, time, std::max(time, word.start_s), alignment);
    double from = std::max(time, word.start_s);
    Spread(text, begin, end, from, std::max(from, word.end_s), alignment);
    cursor = end;
    time = std::max(from, word.end_s);
  }
  Spread(text, cursor, text.size(), time, std::max(time, end_s), alignment);
  return alignment;
}

std::vector<TimedText> WordEntries(const SegmentTimings& segment) {
  std::vector<TimedText> entries;
  for (const audio::WordTiming& word : segment.words) {
    size_t end = std::min(word.text_end, segment.text.size());
    size_t begin = std::min(word.text_begin, end);
    entries.push_back({segment.text.substr(begin, end - begin), word.start_s, word.end_s});
  }
  return entries;
}

std::vector<TimedText> CharacterEntries(const SegmentTimings& segment) {
  CharacterAlignment chars =
      AlignCharacters(segment.text, segment.words, segment.start_s, segment.end_s);
  std::vector<TimedText> entries;
  for (size_t i = 0; i < chars.characters.size(); ++i) {
    entries.push_back(
        {std::move(chars.characters[i]), chars.start_seconds[i], chars.end_seconds[i]});
  }
  return entries;
}

}  // namespace voxserve::service
