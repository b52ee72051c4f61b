// The figures of docs/cosyvoice-generation.md ("The engine"): wall time of one request against
// four at once on one runner, tiny bundle. A measurement, not a check (timings depend on the
// machine), so it is disabled; run it with `unit_engine_cosyvoice_bundle_tests
// --gtest_also_run_disabled_tests --gtest_filter='CosyVoiceFigures.*'`.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "engine/cosyvoice/cosyvoice_engine.h"
#include "unit/engine/cosyvoice_bundle/tiny_bundle.h"

namespace voxserve::engine::cosyvoice {
namespace {

using testing::TinyBundle;

void Measure(bool streaming) {
  CosyVoiceEngineConfig config;
  config.model_id = "cv";
  config.bundle_path = TinyBundle();
  config.streaming = streaming;
  auto engine = CosyVoiceEngine::Create(config);
  ASSERT_TRUE(engine.ok()) << engine.status();
  std::ifstream in(TinyBundle() + "/goldens/prompt.wav", std::ios::binary);
  std::vector<uint8_t> wav((std::istreambuf_iterator<char>(in)), {});
  auto profile = (*engine)->CloneVoice({wav, "This is a short prompt recording."});
  ASSERT_TRUE(profile.ok()) << profile.status();
  auto shared = std::make_shared<const VoiceProfile>(*std::move(profile));
  for (size_t n : {1u, 4u, 1u, 4u}) {
    std::vector<SegmentInput> batch(n, SegmentInput{"Good morning.", "v", 1.0, shared});
    auto started = std::chrono::steady_clock::now();
    auto results = (*engine)->Synthesize(batch);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    ASSERT_TRUE(results[0].ok()) << results[0].status();
    std::printf("streaming=%d requests=%zu wall=%.2f s audio=%.2f s each\n", streaming, n,
                seconds, static_cast<double>(results[0]->samples.size()) / 24000.0);
  }
}

TEST(CosyVoiceFigures, DISABLED_OneVersusFourConcurrentRequests) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  Measure(/*streaming=*/false);
  Measure(/*streaming=*/true);
}

}  // namespace
}  // namespace voxserve::engine::cosyvoice
