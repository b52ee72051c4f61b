// In-process cost of one request without any serving: espeak-ng synthesis of one sentence, and
// synthesis plus encoding. bench/http_baseline.sh sets these beside the HTTP figures to give the
// serving overhead.
#include <benchmark/benchmark.h>

#include "audio/encoder.h"
#include "engine/espeak/espeak_engine.h"

namespace {

constexpr const char* kSentence = "The quick brown fox jumps over the lazy dog.";

voxserve::engine::EspeakEngine& Engine() {
  static auto engine = std::move(*voxserve::engine::EspeakEngine::Create({}));
  return *engine;
}

void BM_EspeakSynthesize(benchmark::State& state) {
  voxserve::engine::SegmentInput input{kSentence, "en-us", 1.0};
  double audio_seconds = 0;
  for (auto _ : state) {
    auto results = Engine().Synthesize({&input, 1});
    audio_seconds += results[0]->DurationSeconds();
    benchmark::DoNotOptimize(results);
  }
  state.counters["audio_s_per_s"] =
      benchmark::Counter(audio_seconds, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EspeakSynthesize)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_EspeakSynthesizeAndEncode(benchmark::State& state) {
  auto format = static_cast<voxserve::audio::AudioFormat>(state.range(0));
  voxserve::engine::SegmentInput input{kSentence, "en-us", 1.0};
  for (auto _ : state) {
    auto results = Engine().Synthesize({&input, 1});
    auto encoder = voxserve::audio::CreateEncoder({format, results[0]->sample_rate, false});
    std::string bytes;
    (void)(*encoder)->Encode(results[0]->samples, &bytes);
    (void)(*encoder)->Finish(&bytes);
    benchmark::DoNotOptimize(bytes);
  }
  state.SetLabel(std::string(voxserve::audio::FormatName(format)));
}
BENCHMARK(BM_EspeakSynthesizeAndEncode)
    ->Arg(static_cast<int>(voxserve::audio::AudioFormat::kWav))
    ->Arg(static_cast<int>(voxserve::audio::AudioFormat::kPcm))
    ->Arg(static_cast<int>(voxserve::audio::AudioFormat::kMp3))
    ->Arg(static_cast<int>(voxserve::audio::AudioFormat::kOpus))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
