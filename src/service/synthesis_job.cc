#include "service/synthesis_job.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cmath>

#include "core/error.h"
#include "service/alignment_estimate.h"

namespace voxserve::service {
namespace {

double SecondsSince(core::Clock::time_point start) {
  return std::chrono::duration<double>(core::Clock::now() - start).count();
}

std::string CodeLabel(const absl::Status& status) {
  std::string name = absl::StatusCodeToString(status.code());
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

}  // namespace

SynthesisJob::SynthesisJob(JobPlan plan, std::unique_ptr<audio::AudioEncoder> encoder,
                           int output_sample_rate, std::shared_ptr<SynthesisSink> sink,
                           EncodeStrand strand, ServiceMetrics& metrics,
                           absl::AnyInvocable<void()> on_finished)
    : plan_(std::move(plan)),
      output_sample_rate_(output_sample_rate),
      encoder_(std::move(encoder)),
      sink_(std::move(sink)),
      strand_(std::move(strand)),
      metrics_(metrics),
      on_finished_(std::move(on_finished)) {
  summary_.model = plan_.voice.model->id();
  summary_.voice = plan_.voice.voice_id;
  summary_.input_chars = plan_.input_chars;
  summary_.segments = static_cast<int>(plan_.segments.size());
  summary_.output_sample_rate = output_sample_rate_;
  if (plan_.cache != nullptr && !plan_.replay) {
    recording_ = std::make_unique<CachedResponse>();
    recording_->output_sample_rate = output_sample_rate_;
  }
}

absl::Status SynthesisJob::Start() {
  // Runs before any callback can exist, so touching strand state here is safe; Submit's lock
  // publishes it to the worker that runs the segment.
  if (plan_.replay) {
    summary_.audio_seconds = plan_.replay->summary.audio_seconds;
    boost::asio::post(strand_, [self = shared_from_this()] { self->ReplayMore(); });
    return absl::OkStatus();
  }
  next_to_submit_ = 1;
  in_scheduler_ = 1;
  if (absl::Status status = SubmitSegment(0); !status.ok()) {
    finished_ = true;
    return status;
  }
  boost::asio::post(strand_, [self = shared_from_this()] { self->SubmitMore(); });
  return absl::OkStatus();
}

const SegmentStyle& SynthesisJob::StyleOf(size_t index) const {
  static const SegmentStyle kPlain;
  return index < plan_.styles.size() ? plan_.styles[index] : kPlain;
}

absl::Status SynthesisJob::SubmitSegment(size_t index) {
  const SegmentStyle& style = StyleOf(index);
  if (style.silence_seconds > 0) {
    // An SSML <break>: silence at the voice's rate, through the same path as an engine's audio.
    audio::PcmAudio silence;
    silence.sample_rate = plan_.voice.sample_rate;
    silence.samples.assign(
        static_cast<size_t>(std::lround(style.silence_seconds * plan_.voice.sample_rate)), 0.0f);
    scheduler::SegmentTiming timing;
    timing.enqueued = timing.started = core::Clock::now();
    boost::asio::post(
        strand_, [self = shared_from_this(), index, silence = std::move(silence),
                  timing]() mutable { self->OnSegmentDone(index, std::move(silence), timing); });
    return absl::OkStatus();
  }
  scheduler::SegmentTask task;
  task.text = plan_.segments[index];
  task.voice_id = plan_.voice.voice_id;
  task.speed = plan_.speed;
  task.voice_profile = plan_.voice_profile;
  task.seed = plan_.seed;
  task.voice_mode = plan_.voice_mode;
  task.instructions = plan_.instructions;
  if (index < plan_.styles.size()) {
    task.speed = style.speed;
    task.pitch = style.pitch;
    task.phonemes = style.phonemes;
    if (!style.voice_id.empty()) {  // an SSML <voice>: a built-in voice of the same model
      task.voice_id = style.voice_id;
      task.voice_profile = nullptr;
      task.voice_mode.reset();
    }
  }
  // The request's first engine segment (SSML may open with a pause) meets admission control.
  bool first = !plan_.continues_stream;
  for (size_t before = 0; first && before < index; ++before) {
    first = StyleOf(before).silence_seconds > 0;
  }
  task.first_of_request = first;
  if (!first && plan_.streaming && delivered_any_) {
    task.listener_runs_out =
        first_audio_at_ + std::chrono::duration_cast<core::Clock::duration>(
                              std::chrono::duration<double>(produced_seconds_));
  }
  task.deadline = plan_.context.deadline;
  task.cancellation = plan_.context.cancellation;
  task.on_chunk = [self = shared_from_this(), index](audio::PcmAudio chunk) {
    // On a scheduler worker, in order before `done`; the strand keeps that order.
    boost::asio::post(self->strand_, [self, index, chunk = std::move(chunk)]() mutable {
      self->OnSegmentChunk(index, std::move(chunk));
    });
  };
  task.done = [self = shared_from_this(), index](absl::StatusOr<audio::PcmAudio> audio,
                                                 const scheduler::SegmentTiming& timing) {
    // On a scheduler worker: hand over to the strand, where encoding happens.
    boost::asio::post(self->strand_, [self, index, audio = std::move(audio), timing]() mutable {
      self->OnSegmentDone(index, std::move(audio), timing);
    });
  };
  return plan_.voice.model->scheduler().Submit(std::move(task));
}

void SynthesisJob::Cancel() {
  plan_.context.cancellation->Cancel();
  plan_.voice.model->scheduler().SweepDeadSegments();
  boost::asio::post(strand_, [self = shared_from_this()] {
    if (!self->finished_) self->Complete(absl::CancelledError("request cancelled by the client"));
  });
}

void SynthesisJob::Resume() {
  boost::asio::post(strand_, [self = shared_from_this()] {
    if (self->paused_) {
      self->paused_ = false;
      self->metrics_.paused.Add(-1);
      if (self->plan_.replay) {
        self->ReplayMore();
      } else {
        self->SubmitMore();
      }
    }
  });
}

absl::Status SynthesisJob::CountProduced(const audio::PcmAudio& audio) {
  produced_seconds_ += audio.DurationSeconds();
  if (plan_.max_audio_seconds <= 0 ||
      plan_.audio_seconds_before + produced_seconds_ <= plan_.max_audio_seconds) {
    return absl::OkStatus();
  }
  // Nothing more is worth making: queued segments are dropped and a streaming engine stops this
  // one at its next step, as for a client that left.
  plan_.context.cancellation->Cancel();
  plan_.voice.model->scheduler().SweepDeadSegments();
  return core::OutputTooLong("the audio would be longer than " + plan_.audio_limit_key + " (" +
                             std::to_string(std::lround(plan_.max_audio_seconds)) +
                             " s): send less text or ask for a higher speed");
}

void SynthesisJob::OnSegmentChunk(size_t index, audio::PcmAudio chunk) {
  if (finished_) return;
  if (absl::Status status = CountProduced(chunk); !status.ok()) return Complete(status);
  pending_[index].chunks.push_back(std::move(chunk));
  if (absl::Status status = EncodeReadyAudio(); !status.ok()) return Complete(status);
}

void SynthesisJob::OnSegmentDone(size_t index, absl::StatusOr<audio::PcmAudio> audio,
                                 const scheduler::SegmentTiming& timing) {
  --in_scheduler_;
  if (finished_) return;
  if (!audio.ok()) return Complete(audio.status());
  summary_.queue_wait_seconds +=
      std::chrono::duration<double>(timing.started - timing.enqueued).count();
  // With on_chunk set the scheduler sends the audio as chunks and `done` carries none.
  if (!audio->samples.empty()) {
    if (absl::Status status = CountProduced(*audio); !status.ok()) return Complete(status);
  }
  PendingSegment& segment = pending_[index];
  if (!audio->samples.empty()) segment.chunks.push_back(std::move(*audio));
  segment.done = true;
  ++done_waiting_;
  if (absl::Status status = EncodeReadyAudio(); !status.ok()) return Complete(status);
  if (next_to_deliver_ < plan_.segments.size()) return SubmitMore();

  std::string tail;
  if (absl::Status status = encoder_->Finish(&tail); !status.ok()) return Complete(status);
  if (plan_.streaming) {
    Deliver(std::move(tail));
  } else {
    // A whole file is usually all in the tail (PcmEncoder builds it in place): take it as it is.
    if (body_.empty()) {
      body_ = std::move(tail);
    } else {
      body_ += tail;
    }
    Deliver(std::move(body_));
  }
  Complete(absl::OkStatus());
}

absl::Status SynthesisJob::EncodeReadyAudio() {
  for (auto it = pending_.find(next_to_deliver_); it != pending_.end();
       it = pending_.find(next_to_deliver_)) {
    const double gain_db = StyleOf(it->first).gain_db;
    for (audio::PcmAudio& pcm : it->second.chunks) {
      if (pcm.sample_rate != plan_.voice.sample_rate) {
        return core::Internal("engine returned audio at " + std::to_string(pcm.sample_rate) +
                              " Hz for a voice declared at " +
                              std::to_string(plan_.voice.sample_rate) + " Hz");
      }
      summary_.audio_seconds += pcm.DurationSeconds();
      ApplyGain(pcm.samples, gain_db);  // SSML <prosody volume>, the same on every engine
      it->second.words.insert(it->second.words.end(), pcm.words.begin(), pcm.words.end());
      if (it->second.timings == audio::TimingsKind::kNone) it->second.timings = pcm.timings;
      std::string bytes;
      if (absl::Status status = encoder_->Encode(pcm.samples, &bytes); !status.ok()) {
        return status;
      }
      if (plan_.streaming) {
        // Past its deadline before its first byte (its first segment was given to the engine
        // in time but finished late): a 504 now, not a stream that would be cut short.
        if (!delivered_any_ && plan_.context.Expired()) {
          return absl::DeadlineExceededError("request deadline passed");
        }
        Deliver(std::move(bytes));
      } else {
        body_ += bytes;
      }
    }
    it->second.chunks.clear();
    if (!it->second.done) break;  // its next chunks are encoded as they come
    ReportTimings(it->first, it->second);
    pending_.erase(it);
    --done_waiting_;
    ++next_to_deliver_;
  }
  return absl::OkStatus();
}

void SynthesisJob::ReportTimings(size_t index, PendingSegment& segment) {
  if (StyleOf(index).silence_seconds > 0) {
    // A pause has no words; the segments after it start later by its length.
    segment_start_seconds_ = summary_.audio_seconds;
    return;
  }
  SegmentTimings timings;
  timings.segment = index;
  timings.text = plan_.segments[index];
  timings.start_s = segment_start_seconds_;
  timings.end_s = summary_.audio_seconds;
  segment_start_seconds_ = summary_.audio_seconds;
  const double duration = timings.end_s - timings.start_s;
  timings.kind = segment.timings;
  timings.words = std::move(segment.words);
  if (timings.kind == audio::TimingsKind::kNone || timings.words.empty()) {
    timings.kind = audio::TimingsKind::kEstimated;
    timings.words = EstimateWordTimings(timings.text, duration);
  }
  // Timings are seconds, so the encoder's resampling leaves them be; engines have applied the
  // request's speed to them already (engine.h). Shift into the request's audio, and keep every
  // word inside its segment whatever an engine reported.
  for (audio::WordTiming& word : timings.words) {
    word.start_s = timings.start_s + std::clamp(word.start_s, 0.0, duration);
    word.end_s = timings.start_s + std::clamp(word.end_s, word.start_s - timings.start_s, duration);
    word.text_end = std::min(word.text_end, timings.text.size());
    word.text_begin = std::min(word.text_begin, word.text_end);
  }
  if (recording_) Record(timings);
  sink_->OnTimings(timings);
}

void SynthesisJob::Record(CachedResponse::Event event) {
  if (const auto* bytes = std::get_if<std::string>(&event)) {
    recording_->audio_bytes += bytes->size();
    // Past the entry bound it would not be stored: stop copying.
    if (recording_->audio_bytes > plan_.cache->config().max_entry_bytes) {
      recording_.reset();
      return;
    }
  }
  recording_->events.push_back(std::move(event));
}

void SynthesisJob::ReplayMore() {
  if (finished_) return;
  const std::vector<CachedResponse::Event>& events = plan_.replay->events;
  while (replay_next_ < events.size()) {
    if (plan_.context.cancellation->IsCancelled()) {
      return Complete(absl::CancelledError("request cancelled by the client"));
    }
    if (plan_.context.Expired()) {
      return Complete(absl::DeadlineExceededError("request deadline passed"));
    }
    const CachedResponse::Event& event = events[replay_next_];
    if (const auto* bytes = std::get_if<std::string>(&event)) {
      // A stream from the cache holds its client back as a synthesized one does.
      if (plan_.streaming && sink_->BufferedBytes() > plan_.stream_buffer_bytes) {
        if (!paused_) metrics_.paused.Add(1);
        paused_ = true;  // Resume() continues
        return;
      }
      ++replay_next_;
      Deliver(*bytes);
    } else {
      ++replay_next_;
      sink_->OnTimings(std::get<SegmentTimings>(event));
    }
  }
  Complete(absl::OkStatus());
}

void SynthesisJob::Deliver(std::string bytes) {
  if (bytes.empty()) return;
  if (recording_) Record(bytes);
  if (!delivered_any_) {
    delivered_any_ = true;
    first_audio_at_ = core::Clock::now();
    summary_.time_to_first_audio_seconds = SecondsSince(plan_.context.received_at);
    sink_->OnCacheResult(plan_.cache_result);
    sink_->OnStart(output_sample_rate_);
  }
  sink_->OnAudio(std::move(bytes));
}

void SynthesisJob::SubmitMore() {
  if (finished_) return;
  if (plan_.context.cancellation->IsCancelled()) {
    return Complete(absl::CancelledError("request cancelled by the client"));
  }
  if (plan_.context.Expired()) {
    return Complete(absl::DeadlineExceededError("request deadline passed"));
  }
  while (next_to_submit_ < plan_.segments.size() &&
         in_scheduler_ + done_waiting_ < static_cast<size_t>(plan_.pipeline_depth)) {
    if (plan_.streaming && sink_->BufferedBytes() > plan_.stream_buffer_bytes) {
      if (!paused_) metrics_.paused.Add(1);
      paused_ = true;  // Resume() continues once the client has caught up
      return;
    }
    if (absl::Status status = SubmitSegment(next_to_submit_); !status.ok()) {
      return Complete(status);
    }
    ++next_to_submit_;
    ++in_scheduler_;
  }
}

void SynthesisJob::Complete(const absl::Status& status) {
  finished_ = true;
  if (paused_) {
    paused_ = false;
    metrics_.paused.Add(-1);
  }
  summary_.total_seconds = SecondsSince(plan_.context.received_at);
  const std::string& model = summary_.model;
  if (status.ok()) {
    if (summary_.time_to_first_audio_seconds) {
      metrics_.time_to_first_audio.WithLabels({model}).Observe(
          *summary_.time_to_first_audio_seconds);
    }
    metrics_.synthesis_duration.WithLabels({model}).Observe(summary_.total_seconds);
    // A replay's speed says nothing of the engine's.
    if (summary_.audio_seconds > 0 && !plan_.replay) {
      metrics_.real_time_factor.WithLabels({model}).Observe(summary_.total_seconds /
                                                            summary_.audio_seconds);
    }
    metrics_.audio_seconds.WithLabels({model}).Increment(summary_.audio_seconds);
    metrics_.characters.WithLabels({model}).Increment(static_cast<double>(summary_.input_chars));
    if (recording_) {
      recording_->summary = summary_;
      plan_.cache->Insert(plan_.cache_key, plan_.cache_tags, std::move(recording_),
                          plan_.cache_generation);
    }
  } else {
    metrics_.failed.WithLabels({model, CodeLabel(status)}).Increment();
  }
  std::shared_ptr<SynthesisSink> sink = std::move(sink_);
  sink->OnComplete(status, summary_);
  pending_.clear();
  if (on_finished_) std::move(on_finished_)();
}

}  // namespace voxserve::service
