// The figures of docs/cosyvoice-generation.md ("The engine"), tiny bundle: wall time of one
// request against four at once on one runner, and the longest Step when pieces end apart. A
// measurement, not a check (timings depend on the machine), so it is disabled; run it with
// `unit_engine_cosyvoice_bundle_tests
// --gtest_also_run_disabled_tests --gtest_filter='CosyVoiceFigures.*'`.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>

#include "engine/cosyvoice/cosyvoice_engine.h"
#include "engine/cosyvoice/cosyvoice_runner.h"
#include "unit/engine/cosyvoice_bundle/tiny_bundle.h"

namespace voxserve::engine::cosyvoice {
namespace {

using testing::TinyBundle;

void Measure(bool streaming, int vocoder_threads, int intra_op_threads) {
  CosyVoiceEngineConfig config;
  config.model_id = "cv";
  config.bundle_path = TinyBundle();
  config.session.intra_op_threads = intra_op_threads;
  config.streaming = streaming;
  config.vocoder_threads = vocoder_threads;
  auto engine = CosyVoiceEngine::Create(config);
  ASSERT_TRUE(engine.ok()) << engine.status();
  std::ifstream in(TinyBundle() + "/goldens/prompt.wav", std::ios::binary);
  std::vector<uint8_t> wav((std::istreambuf_iterator<char>(in)), {});
  auto profile = (*engine)->CloneVoice({wav, "This is a short prompt recording."});
  ASSERT_TRUE(profile.ok()) << profile.status();
  auto shared = std::make_shared<const VoiceProfile>(*std::move(profile));
  for (size_t n : {1u, 4u}) {
    std::vector<SegmentInput> batch(n, SegmentInput{"Good morning.", "v", 1.0, shared});
    auto started = std::chrono::steady_clock::now();
    auto results = (*engine)->Synthesize(batch);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    ASSERT_TRUE(results[0].ok()) << results[0].status();
    std::printf(
        "streaming=%d vocoder_threads=%d intra_op_threads=%d requests=%zu wall=%.2f s "
        "audio=%.2f s each\n",
        streaming, vocoder_threads, intra_op_threads, n, seconds,
        static_cast<double>(results[0]->samples.size()) / 24000.0);
    std::fflush(stdout);
  }
}

// Four segments on one runner whose LLMs stop after 60, 120, 180 and 240 tokens (a logp hook), so
// their pieces finish at different steps: the total, and the longest Step (how long the others'
// next token waited).
void MeasureStaggered(int vocoder_threads, int intra_op_threads) {
  CosyVoiceEngineConfig config;
  config.model_id = "cv";
  config.bundle_path = TinyBundle();
  config.session.intra_op_threads = intra_op_threads;
  config.vocoder_threads = vocoder_threads;
  auto engine = CosyVoiceEngine::Create(config);
  ASSERT_TRUE(engine.ok()) << engine.status();
  std::ifstream in(TinyBundle() + "/goldens/prompt.wav", std::ios::binary);
  std::vector<uint8_t> wav((std::istreambuf_iterator<char>(in)), {});
  auto profile = (*engine)->CloneVoice({wav, "This is a short prompt recording."});
  ASSERT_TRUE(profile.ok()) << profile.status();
  auto shared = std::make_shared<const VoiceProfile>(*std::move(profile));
  auto created = (*engine)->CreateRunner();
  ASSERT_TRUE(created.ok());
  std::unique_ptr<CosyVoiceRunner> runner(dynamic_cast<CosyVoiceRunner*>(created->release()));
  auto seen = std::make_shared<std::map<uint64_t, int>>();
  runner->decoder().SetLogpHook([seen](uint64_t id, std::span<float> logp) {
    if (++(*seen)[id] <= static_cast<int>(60 * id)) return;
    for (float& value : logp) value = -std::numeric_limits<float>::infinity();
    logp[6562] = 0;  // a stop token (llm.py:544)
  });
  for (SequenceId id = 1; id <= 4; ++id) {
    ASSERT_TRUE(runner->Begin(id, {"Good morning.", "v", 1.0, shared}).ok());
  }
  auto started = std::chrono::steady_clock::now();
  double longest = 0;
  int steps = 0;
  while (runner->Active() > 0 && steps < 100000) {
    auto before = std::chrono::steady_clock::now();
    runner->Step();
    longest = std::max(
        longest, std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count());
    ++steps;
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf(
      "staggered vocoder_threads=%d intra_op_threads=%d wall=%.2f s longest step=%.3f s "
      "steps=%d\n",
      vocoder_threads, intra_op_threads, seconds, longest, steps);
  std::fflush(stdout);
}

TEST(CosyVoiceFigures, DISABLED_StaggeredPiecesDoNotStallTheLlm) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  for (int intra : {0, 1}) {
    for (int threads : {1, 2}) MeasureStaggered(threads, intra);
  }
}

TEST(CosyVoiceFigures, DISABLED_OneVersusFourConcurrentRequests) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  for (int intra : {0, 1}) {
    for (bool streaming : {false, true}) {
      for (int threads : {1, 2}) Measure(streaming, threads, intra);
    }
  }
}

}  // namespace
}  // namespace voxserve::engine::cosyvoice
