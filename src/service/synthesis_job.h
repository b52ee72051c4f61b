// One request on its way through the service: feeds its segments to the model's scheduler a few
// at a time, encodes each segment's audio chunk by chunk as it comes (a streaming engine's
// chunks, or a whole-segment engine's one), in segment order, and hands bytes to the
// transport's sink, pausing while the client is behind. A whole-file response collects them. The
// transport keeps a shared_ptr to call Cancel() and Resume().
#pragma once

#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "audio/encoder.h"
#include "scheduler/scheduler.h"
#include "service/response_cache.h"
#include "service/service_metrics.h"
#include "service/ssml_plan.h"
#include "service/synthesis_request.h"
#include "service/voice_catalog.h"

namespace voxserve::service {

using EncodeStrand = boost::asio::strand<boost::asio::thread_pool::executor_type>;

struct JobPlan {
  ResolvedVoice voice;
  // A cloned voice's profile (SynthesisRequest::voice_profile), handed to every segment.
  std::shared_ptr<const engine::VoiceProfile> voice_profile;
  std::optional<uint64_t> seed;  // SynthesisRequest::seed
  // SynthesisRequest::resolved_voice_mode and instructions, handed to every segment.
  std::optional<engine::VoiceMode> voice_mode;
  std::string instructions;
  std::vector<std::string> segments;  // non-empty
  // SSML's (ssml_plan.h): one per segment, or empty when every segment is spoken as the request
  // says. A segment with silence_seconds is made here, not by the engine, and has no text.
  std::vector<SegmentStyle> styles;
  double speed = 1.0;
  bool streaming = false;
  bool continues_stream = false;  // SynthesisRequest::continues_stream
  size_t input_chars = 0;
  int pipeline_depth = 2;
  size_t stream_buffer_bytes = 1 << 20;
  // The audio bound (TtsService: limits.max_audio_seconds or max_stream_audio_seconds). Audio
  // is counted as the engine makes it, before encoding; once it and `audio_seconds_before` (a
  // stream's earlier sentences) pass the bound, the job ends with core::OutputTooLong and what
  // is still queued or running is cancelled. 0: no bound.
  double max_audio_seconds = 0;
  double audio_seconds_before = 0;
  std::string audio_limit_key;  // the config key of the bound, named in the error
  core::RequestContext context;
  // The response cache (TtsService). `replay`: a stored response, replayed to the sink as it
  // was heard (a stream's chunks one by one, with backpressure) and no segment is synthesized.
  // Otherwise, with `cache` set, what the sink hears is recorded and stored under `cache_key`
  // when the request succeeds. The cache outlives the job (owned by the service).
  std::shared_ptr<const CachedResponse> replay;
  ResponseCache* cache = nullptr;
  std::string cache_key;
  std::vector<std::string> cache_tags;           // ResponseCache::Insert's
  uint64_t cache_generation = 0;                 // ResponseCache::Generation when the request began
  CacheResult cache_result = CacheResult::kOff;  // told to the sink (SynthesisSink::OnCacheResult)
};

// Shared by the transport (Cancel/Resume), the scheduler callbacks in flight and its own strand.
// The transport must hold it until the sink's OnComplete: a paused job has no other owner.
// All mutable state below is touched only on `strand_`, except where noted.
class SynthesisJob : public std::enable_shared_from_this<SynthesisJob> {
 public:
  SynthesisJob(JobPlan plan, std::unique_ptr<audio::AudioEncoder> encoder, int output_sample_rate,
               std::shared_ptr<SynthesisSink> sink, EncodeStrand strand, ServiceMetrics& metrics,
               absl::AnyInvocable<void()> on_finished);

  // Queues the first segment. On error nothing was queued and the sink will never be called:
  // the caller answers the error itself (e.g. 429 with Retry-After).
  absl::Status Start();

  // The client went away: queued segments are dropped and the sink gets Cancelled. Safe cross
  // thread, idempotent.
  void Cancel();
  // The transport has written enough of what it held; continue if paused. Safe cross thread.
  void Resume();

 private:
  void OnSegmentChunk(size_t index, audio::PcmAudio chunk);
  void OnSegmentDone(size_t index, absl::StatusOr<audio::PcmAudio> audio,
                     const scheduler::SegmentTiming& timing);
  absl::Status SubmitSegment(size_t index);
  const SegmentStyle& StyleOf(size_t index) const;
  // Counts audio the engine made (any segment's, in the order it comes); OutputTooLong past the
  // bound.
  absl::Status CountProduced(const audio::PcmAudio& audio);
  void SubmitMore();
  // Encodes what has come of the segment due next, and of those after it once it is done.
  absl::Status EncodeReadyAudio();
  void Deliver(std::string bytes);
  void Complete(const absl::Status& status);
  // Replays plan_.replay from replay_next_ on, until done or the client is behind.
  void ReplayMore();
  void Record(CachedResponse::Event event);

  const JobPlan plan_;
  const int output_sample_rate_;
  std::unique_ptr<audio::AudioEncoder> encoder_;
  std::shared_ptr<SynthesisSink> sink_;  // released after OnComplete
  EncodeStrand strand_;
  ServiceMetrics& metrics_;
  absl::AnyInvocable<void()> on_finished_;

  size_t next_to_submit_ = 0;
  size_t next_to_deliver_ = 0;
  size_t in_scheduler_ = 0;
  // Audio of segments not yet fully delivered, by segment index: chunks of a segment whose turn
  // has not come wait here (at most pipeline_depth segments are in flight).
  struct PendingSegment {
    std::vector<audio::PcmAudio> chunks;
    bool done = false;                     // its last chunk has come
    std::vector<audio::WordTiming> words;  // of the chunks encoded so far, in segment time
    audio::TimingsKind timings = audio::TimingsKind::kNone;
  };
  // Reports the timings of the segment just delivered, which began at segment_start_seconds_.
  void ReportTimings(size_t index, PendingSegment& segment);
  std::map<size_t, PendingSegment> pending_;
  double segment_start_seconds_ = 0;  // audio delivered before the segment due next
  double produced_seconds_ = 0;       // audio the engine has made so far, delivered or not
  size_t done_waiting_ = 0;  // entries of pending_ that are done: count against pipeline_depth
  std::string body_;         // non-streaming: the whole file, delivered at the end
  bool paused_ = false;
  bool finished_ = false;
  bool delivered_any_ = false;
  core::Clock::time_point first_audio_at_;  // when delivered_any_ became true
  SynthesisSummary summary_;
  size_t replay_next_ = 0;                     // the next event of plan_.replay
  std::unique_ptr<CachedResponse> recording_;  // what the sink heard, for plan_.cache
};

}  // namespace voxserve::service
