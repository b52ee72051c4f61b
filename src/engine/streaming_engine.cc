#include "engine/streaming_engine.h"

#include <algorithm>
#include <map>

namespace voxserve::engine {

std::vector<absl::StatusOr<audio::PcmAudio>> SynthesizeByStepping(
    StreamRunner& runner, std::span<const SegmentInput> batch, int max_active) {
  std::vector<absl::StatusOr<audio::PcmAudio>> results(batch.size(), audio::PcmAudio{});
  std::map<SequenceId, size_t> running;  // sequence id (= input index) -> index
  size_t next = 0;
  const size_t limit = static_cast<size_t>(std::max(1, max_active));
  while (next < batch.size() || !running.empty()) {
    while (next < batch.size() && running.size() < limit) {
      if (absl::Status begun = runner.Begin(next, batch[next]); begun.ok()) {
        running.emplace(next, next);
      } else {
        results[next] = begun;
      }
      ++next;
    }
    if (running.empty()) continue;
    for (SequenceStep& step : runner.Step()) {
      auto it = running.find(step.id);
      if (it == running.end()) continue;  // a contract breach; ignore rather than corrupt
      absl::StatusOr<audio::PcmAudio>& result = results[it->second];
      if (result.ok() && (!step.chunk.samples.empty() || !step.chunk.words.empty())) {
        audio::AppendChunk(*result, std::move(step.chunk));
      }
      if (step.end) {
        if (!step.end->ok()) result = *step.end;
        running.erase(it);
      }
    }
    if (runner.Active() == 0 && !running.empty()) {
      // The runner dropped sequences without ending them: end them here rather than loop.
      for (const auto& [id, index] : running) {
        results[index] = absl::InternalError("engine dropped a segment without ending it");
      }
      running.clear();
    }
  }
  return results;
}

std::vector<absl::StatusOr<audio::PcmAudio>> StreamingEngine::Synthesize(
    std::span<const SegmentInput> batch) {
  auto runner = CreateRunner();
  if (!runner.ok()) return {batch.size(), runner.status()};
  return SynthesizeByStepping(**runner, batch, max_active());
}

}  // namespace voxserve::engine
