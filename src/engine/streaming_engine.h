// The second engine contract: streaming engines (CosyVoice and other autoregressive models),
// beside the whole-segment Engine of engine.h. A streaming engine emits a segment's audio as a
// sequence of chunks while it generates it, and advances all the segments active on one instance
// together, one step at a time (iteration-level / continuous batching, as vLLM's model runner and
// TensorRT-LLM's in-flight batching do). docs/engines.md describes both kinds.
//
// The split (vLLM's): the scheduler (scheduler/) decides between steps which sequences run —
// admission, first-segment priority, max_active, deadlines, cancellation; the engine's
// StreamRunner only executes one step for the set it was given.
//
// The contract, per runner:
//  - Begin(id, input) adds a sequence; it is advanced from the next Step() on. The runner copies
//    what it needs from `input` (the views end with the call).
//  - Step() advances every active sequence once and reports, per sequence, at most one chunk
//    (may be none on a step that made no audio yet) and, on its last step, its end: OK when the
//    segment is complete, or the error that stopped it. A sequence whose end was reported is gone
//    (its id may never appear again). Every begun sequence ends exactly once: through Step, or by
//    Release.
//  - Release(id) forgets an active sequence now (cancelled, expired, server stopping): its state
//    is freed and its slot is free for the next Begin; no further output for it. Unknown ids are
//    ignored (it may have ended on the step before).
//  - Chunks of one sequence come out in order, each at the voice's sample rate; concatenated
//    they are the segment's audio.
//
// Threading: CreateRunner may be called from several scheduler instance threads (or worker
// processes) at once; each runner is then used by exactly one thread, which makes every call on
// it (no call is concurrent with another on the same runner). Runners of one engine may step at
// the same time on different threads: what they share (weights, sessions) is read-only or
// serialized inside the engine, and all per-sequence state (KV cache, token history, vocoder
// overlap) lives in the runner, keyed by sequence id, so nothing passes between requests by
// accident. Step() may block for as long as one step computes; it must never wait on anything
// the scheduler holds.
//
// Work off the step thread: a runner may hand part of a step's work (CosyVoice: flow + HiFT of a
// finished piece) to threads of its engine and report the result from a later Step. Such a
// sequence stays active (Active() counts it) until its end is reported; its chunks keep their
// order; Release drops its pending work (it may still run, nothing of it is reported). When a
// runner has no sequence to advance and only such work pending, Step waits for it, up to a short
// bound the runner documents (CosyVoice: 10 ms), and may return nothing: a caller that calls
// Step in a loop while sequences are active (the scheduler's step loop does) neither spins nor
// leaves new segments waiting to be begun for longer than that bound.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "audio/pcm.h"
#include "engine/engine.h"

namespace voxserve::engine {

// Names one sequence (one segment) within a runner; chosen by the caller, unique per runner.
using SequenceId = uint64_t;

// What one Step() produced for one sequence.
struct SequenceStep {
  SequenceId id = 0;
  audio::PcmAudio chunk;            // this step's audio; samples may be empty
  std::optional<absl::Status> end;  // set on the sequence's last step: OK or why it stopped
};

// Plain data: what a runner is doing, read after each Step for the metrics that explain a stall
// (scheduler_metrics.h publishes it per instance; docs/observability.md). Gauges are the state
// after the step; totals count since the runner was made. A runner without these parts leaves
// them 0.
struct StreamRunnerStats {
  uint64_t decoding = 0;               // sequences an autoregressive model is generating tokens for
  uint64_t prefill_waiting = 0;        // sequences waiting for their prompt's prefill
  uint64_t tokens_total = 0;           // tokens generated
  uint64_t vocoder_pending = 0;        // work handed off the step thread and not back yet
  uint64_t vocoder_jobs_total = 0;     // such work done
  uint64_t vocoder_batched_total = 0;  // the batch sizes it ran in, summed (mean = / jobs)
  bool operator==(const StreamRunnerStats&) const = default;
};

// The active sequences of one engine instance and the step that advances them all. Owned by
// the scheduler's instance (or the worker process) that created it; one thread uses it.
class StreamRunner {
 public:
  virtual ~StreamRunner() = default;

  // InvalidArgument for an input the engine cannot speak (that sequence never starts);
  // ResourceExhausted when max_active sequences are active already.
  virtual absl::Status Begin(SequenceId id, const SegmentInput& input) = 0;
  // One entry per sequence that made audio or ended this step, in the order they were begun.
  virtual std::vector<SequenceStep> Step() = 0;
  virtual void Release(SequenceId id) = 0;
  virtual size_t Active() const = 0;
  // The runner's figures now (after a Step): cheap, called once per step.
  virtual StreamRunnerStats Stats() const { return {}; }
};

// A streaming engine is also an Engine: voices, AcceptsVoice, Warmup and voice_cloner mean the
// same, and Synthesize (the whole-segment contract) is provided by running a private runner to
// the end and joining the chunks, so any caller of the old contract keeps working unchanged.
// Owned by the model registry; shared with the schedulers that drive it.
class StreamingEngine : public Engine {
 public:
  // Most sequences one runner advances together (its preallocated capacity); the scheduler's
  // scheduling.max_active is capped by it.
  virtual int max_active() const = 0;
  // A runner for one instance. Safe cross thread.
  virtual absl::StatusOr<std::unique_ptr<StreamRunner>> CreateRunner() = 0;

  std::vector<absl::StatusOr<audio::PcmAudio>> Synthesize(
      std::span<const SegmentInput> batch) override;
  StreamingEngine* AsStreaming() override { return this; }
};

// Runs `batch` through `runner` until every sequence has ended (at most max_active at a time)
// and joins each sequence's chunks: the whole-segment view of a streaming engine.
std::vector<absl::StatusOr<audio::PcmAudio>> SynthesizeByStepping(
    StreamRunner& runner, std::span<const SegmentInput> batch, int max_active);

}  // namespace voxserve::engine
