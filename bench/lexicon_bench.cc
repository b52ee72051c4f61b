// What a request's pronunciation dictionaries cost: lexicon::Apply over a short sentence and a
// 4 KiB text (the longest `input` many clients send) with dictionaries of 10, 1 000 and 10 000
// rules (the default dictionaries.max_rules), whole-word and case-insensitive, beside espeak-ng
// synthesizing one sentence, in one run so that the figures compare as ratios. Apply builds its
// index per request (the part that grows with the rules), then walks the text once.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "engine/espeak/espeak_engine.h"
#include "text/lexicon/lexicon.h"

namespace {

namespace lexicon = voxserve::text::lexicon;
namespace ssml = voxserve::text::ssml;

std::string Word(std::mt19937& random) {
  std::uniform_int_distribution<int> length(3, 10), letter('a', 'z');
  std::string word;
  for (int i = length(random); i > 0; --i) word += static_cast<char>(letter(random));
  return word;
}

// `rules` aliases of random words (a few acronyms in capitals, as real dictionaries have).
lexicon::Lexicon Dictionary(int rules, bool case_sensitive, std::mt19937& random) {
  lexicon::Lexicon dictionary;
  for (int i = 0; i < rules; ++i) {
    std::string grapheme = Word(random);
    if (i % 5 == 0) {
      for (char& c : grapheme) c = static_cast<char>(c - 'a' + 'A');
    }
    dictionary.lexemes.push_back(
        {.graphemes = {grapheme}, .alias = "alias " + grapheme, .case_sensitive = case_sensitive});
  }
  return dictionary;
}

// `bytes` of ordinary words with one dictionary grapheme in every 20 words.
std::string Text(const lexicon::Lexicon& dictionary, size_t bytes, std::mt19937& random) {
  std::string text;
  std::uniform_int_distribution<size_t> pick(0, dictionary.lexemes.size() - 1);
  for (int i = 0; text.size() < bytes; ++i) {
    text += i % 20 == 19 ? dictionary.lexemes[pick(random)].graphemes[0] : Word(random);
    text += i % 12 == 11 ? ". " : " ";
  }
  text.resize(bytes);
  return text;
}

// Args: the dictionary's rules, the text's bytes (64: one short sentence, where the per-request
// index dominates; 4096: a long input).
void ApplyDictionary(benchmark::State& state, bool case_sensitive) {
  std::mt19937 random(42);
  const lexicon::Lexicon dictionary =
      Dictionary(static_cast<int>(state.range(0)), case_sensitive, random);
  const size_t bytes = static_cast<size_t>(state.range(1));
  const std::vector<ssml::SpeechItem> items = {{.text = Text(dictionary, bytes, random)}};
  const lexicon::Lexicon* lexicons[] = {&dictionary};
  std::string spoken;
  for (auto _ : state) {
    std::vector<ssml::SpeechItem> out = lexicon::Apply(items, lexicons, false);
    spoken = out.front().text;
    benchmark::DoNotOptimize(out);
  }
  // How many graphemes were replaced: the run is void if none were.
  size_t replaced = 0;
  for (size_t at = spoken.find("alias "); at != std::string::npos;
       at = spoken.find("alias ", at + 1)) {
    ++replaced;
  }
  state.counters["replaced"] = static_cast<double>(replaced);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

void BM_ApplyDictionary(benchmark::State& state) { ApplyDictionary(state, true); }
BENCHMARK(BM_ApplyDictionary)
    ->ArgsProduct({{10, 1000, 10000}, {64, 4096}})
    ->Unit(benchmark::kMicrosecond);

void BM_ApplyDictionaryCaseInsensitive(benchmark::State& state) { ApplyDictionary(state, false); }
BENCHMARK(BM_ApplyDictionaryCaseInsensitive)
    ->ArgsProduct({{10000}, {64, 4096}})
    ->Unit(benchmark::kMicrosecond);

// The reference: what one sentence of speech costs the default engine.
void BM_EspeakOneSentence(benchmark::State& state) {
  static auto engine = std::move(*voxserve::engine::EspeakEngine::Create({}));
  voxserve::engine::SegmentInput input{"The quick brown fox jumps over the lazy dog.", "en-us",
                                       1.0};
  for (auto _ : state) {
    auto results = engine->Synthesize({&input, 1});
    benchmark::DoNotOptimize(results);
  }
}
BENCHMARK(BM_EspeakOneSentence)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
