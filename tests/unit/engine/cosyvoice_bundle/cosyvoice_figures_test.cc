// The figures of docs/cosyvoice-generation.md ("The engine"), tiny bundle: wall time of one
// request against four at once on one runner, and the longest Step when pieces end apart. A
// measurement, not a check (timings depend on the machine), so it is disabled; run it with
// `unit_engine_cosyvoice_bundle_tests
// --gtest_also_run_disabled_tests --gtest_filter='CosyVoiceFigures.*'`.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
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

// One 200-token piece streamed under a hop schedule (stream_first_hop, stream_max_hop; 0, 0:
// upstream's), and the same piece whole: the first chunk's audio, and what the schedule costs
// the audio (docs/cosyvoice-generation.md, "The hop schedule"): the RMS of the streamed audio's
// difference from the whole piece's, relative to the whole piece's RMS, and the largest step
// between two samples at a chunk join over the median step inside the piece.
struct Spoken {
  std::vector<float> audio;
  std::vector<size_t> chunks;
};
Spoken SpeakOnePiece(bool streaming, int first_hop, int max_hop) {
  CosyVoiceEngineConfig config;
  config.model_id = "cv";
  config.bundle_path = TinyBundle();
  config.streaming = streaming;
  config.stream_first_hop = first_hop;
  config.stream_max_hop = max_hop;
  auto engine = CosyVoiceEngine::Create(config);
  EXPECT_TRUE(engine.ok()) << engine.status();
  if (!engine.ok()) return {};
  std::ifstream in(TinyBundle() + "/goldens/prompt.wav", std::ios::binary);
  std::vector<uint8_t> wav((std::istreambuf_iterator<char>(in)), {});
  auto profile = (*engine)->CloneVoice({wav, "This is a short prompt recording."});
  EXPECT_TRUE(profile.ok()) << profile.status();
  auto created = (*engine)->CreateRunner();
  std::unique_ptr<CosyVoiceRunner> runner(dynamic_cast<CosyVoiceRunner*>(created->release()));
  auto seen = std::make_shared<int>(0);
  runner->decoder().SetLogpHook([seen](uint64_t, std::span<float> logp) {
    if (++*seen <= 200) {
      for (int64_t stop = 6561; stop <= 6563; ++stop) {
        logp[stop] = -std::numeric_limits<float>::infinity();
      }
      return;
    }
    for (float& value : logp) value = -std::numeric_limits<float>::infinity();
    logp[6562] = 0;
  });
  auto shared = std::make_shared<const VoiceProfile>(*std::move(profile));
  EXPECT_TRUE(runner->Begin(1, {"Hello world and all who live on it.", "v", 1.0, shared}).ok());
  Spoken spoken;
  for (int guard = 0; runner->Active() > 0 && guard < 100000; ++guard) {
    for (SequenceStep& step : runner->Step()) {
      if (step.chunk.samples.empty()) continue;
      spoken.chunks.push_back(step.chunk.samples.size());
      spoken.audio.insert(spoken.audio.end(), step.chunk.samples.begin(), step.chunk.samples.end());
    }
  }
  return spoken;
}

TEST(CosyVoiceFigures, DISABLED_WhatAHopScheduleCostsTheAudio) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  const Spoken whole = SpeakOnePiece(false, 0, 0);
  ASSERT_FALSE(whole.audio.empty());
  double whole_energy = 0;
  std::vector<float> steps;
  for (size_t k = 0; k < whole.audio.size(); ++k) {
    whole_energy += whole.audio[k] * whole.audio[k];
    if (k > 0) steps.push_back(std::abs(whole.audio[k] - whole.audio[k - 1]));
  }
  std::nth_element(steps.begin(), steps.begin() + steps.size() / 2, steps.end());
  const double median_step = steps[steps.size() / 2];
  for (auto [first, max] :
       {std::pair{0, 0}, std::pair{15, 0}, std::pair{10, 0}, std::pair{15, 50}}) {
    const Spoken streamed = SpeakOnePiece(true, first, max);
    ASSERT_EQ(streamed.audio.size(), whole.audio.size());
    double difference = 0;
    for (size_t k = 0; k < whole.audio.size(); ++k) {
      const double d = streamed.audio[k] - whole.audio[k];
      difference += d * d;
    }
    double worst_join = 0;
    size_t at = 0;
    for (size_t k = 0; k + 1 < streamed.chunks.size(); ++k) {
      at += streamed.chunks[k];
      worst_join = std::max(
          worst_join, static_cast<double>(std::abs(streamed.audio[at] - streamed.audio[at - 1])));
    }
    std::printf(
        "schedule first_hop=%d max_hop=%d: chunks=%zu first chunk=%.0f ms, difference from the "
        "whole piece=%.1f %% RMS, worst join step=%.1f x median step\n",
        first, max, streamed.chunks.size(), streamed.chunks.front() / 24.0,
        100 * std::sqrt(difference / whole_energy), worst_join / median_step);
    std::fflush(stdout);
  }
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
