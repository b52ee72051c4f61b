// The threads that run CosyVoice's flow + HiFT off the LLM's step thread
// (docs/cosyvoice-generation.md, "The engine"): a runner posts the vocoding of a finished piece
// (or a ready streaming hop) here and its next Step goes on decoding the other segments. When
// the bundle's flow estimator has a dynamic batch axis, whole pieces waiting here together share
// its calls (FlowMatcher::RunBatchOnProvider); with upstream's fixed batch of one CFG pair they
// run one after another.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <variant>

#include "absl/status/statusor.h"
#include "engine/cosyvoice/causal_hift_stream.h"
#include "engine/cosyvoice/flow_matcher.h"
#include "engine/cosyvoice/hift_stream.h"

namespace voxserve::engine::cosyvoice {

// Where a streaming hop is in its piece (FlowMatcher::Hop without the request).
struct FlowHopAt {
  size_t token_offset = 0;
  bool finalize = false;
};

// Which waiting job a free thread takes (docs/cosyvoice-generation.md, "Who goes first"): a
// stream's first chunk before any stream's later chunks, so a newcomer hears audio without
// waiting behind others' tenth hop; among later chunks, the stream whose listener runs out of
// audio soonest (a client playing at 1x from its first chunk). Ties, and first chunks among
// themselves, in the order posted.
struct JobPriority {
  bool first_chunk = true;
  std::chrono::steady_clock::time_point runs_dry{};  // later chunks: first audio + audio sent
};

// A whole piece's flow, or a streaming hop's (`hop`), which may share estimator calls with other
// waiting pieces' (hops') of the same length, then its own rest (HiFT, the report). A hop's HiFT
// also shares the vocoder's graph calls with the batch's other hops of its mel length. Owned by
// the pool until it runs or is dropped.
struct FlowJob {
  FlowRequest request;  // views into what `keeps` owns
  // Set: a streaming hop (FlowMatcher::RunPrefixBatch). Its mel comes to the host and goes
  // through the piece's HiftStream (`hift`, with its `noise`) or, CosyVoice3, its
  // CausalHiftStream (`causal_hift`): owned through `keeps`, used by this job alone;
  // `finish_hop` gets the hop's audio or the flow's (HiFT's) error.
  std::optional<FlowHopAt> hop;
  HiftStream* hift = nullptr;
  SourceNoise* noise = nullptr;
  CausalHiftStream* causal_hift = nullptr;
  std::function<void(absl::StatusOr<std::vector<float>>)> finish_hop;
  std::shared_ptr<const void> keeps;  // the request's tokens and voice profile
  std::function<bool()> dropped;      // true: its segment is gone; `skip` runs instead
  std::function<void()> before;       // on the pool thread, before its flow (a test hook)
  // On the pool thread with the piece's mel (left in the provider's memory) or the flow's error.
  std::function<void(absl::StatusOr<ProviderMel>)> finish;
  std::function<void()> skip;
  // On the pool thread before `finish` (`finish_hop`): how many jobs shared its flow's
  // estimator calls (1: alone), for the metrics.
  std::function<void(size_t)> batched;
  JobPriority priority;
};

// Owned by CosyVoiceEngine and shared by its runners; Post and PostFlow are safe cross thread.
// Jobs start by JobPriority, up to threads() at once (a flow batch counts as one); a job
// owns (or shares) everything it reads except the engine's immutable stages, which outlive the
// pool. Destruction waits for the jobs running and drops (destroys without running) those not
// started.
class VocoderPool {
 public:
  // The largest group of pieces one estimator batch takes (2 rows each): 16 pieces, 32 rows,
  // the c = 16 of the benchmarks; a bigger group would only lengthen the first pieces' wait.
  static constexpr size_t kMaxFlowBatch = 16;

  // InvalidArgument unless 1 <= threads <= 64. `flow` (may be null: no flow jobs) batches pieces
  // when its estimator's batch axis is dynamic.
  static absl::StatusOr<std::unique_ptr<VocoderPool>> Create(int threads,
                                                             const FlowMatcher* flow = nullptr);
  ~VocoderPool();

  void Post(std::function<void()> job, JobPriority priority = {});
  // Queues a piece's (or a hop's) flow. A pool thread takes the waiting job that goes first and,
  // when the flow batches, every other waiting piece (hop) of the same length (up to
  // kMaxFlowBatch), runs their flows in one RunBatchOnProvider (RunPrefixBatch), then each
  // piece's finish in turn, or all the hops' HiFT in one HiftStream::PushBatch (CosyVoice3's
  // causal streams push in turn).
  void PostFlow(FlowJob job);
  // Whether PostFlow shares estimator calls (the estimator's batch axis is dynamic).
  bool batches_flows() const;
  int threads() const { return threads_; }

 private:
  struct Impl;
  VocoderPool(int threads, const FlowMatcher* flow, std::unique_ptr<Impl> impl);
  struct Waiting {
    JobPriority priority;
    uint64_t order = 0;  // posting order
    std::variant<std::function<void()>, FlowJob> job;
  };
  // Takes the waiting job that goes first (JobPriority), under mutex_.
  Waiting TakeFirst();
  void RunNext();                // on a pool thread: the job that goes first (or nothing)
  void RunFlows(FlowJob first);  // it and the waiting flows of its length, in one batch

  int threads_;
  const FlowMatcher* flow_;
  std::mutex mutex_;
  std::deque<Waiting> waiting_;  // guarded by mutex_; few (one job per segment at most)
  uint64_t next_order_ = 0;      // guarded by mutex_
  std::unique_ptr<Impl> impl_;   // last: its threads stop (and join) before the queue goes
};

}  // namespace voxserve::engine::cosyvoice
