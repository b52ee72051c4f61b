#include "service/speech_session.h"

#include <algorithm>

#include "core/error.h"
#include "service/request_checks.h"
#include "service/tts_service.h"
#include "text/input_limits.h"
#include "text/speakable_text.h"
#include "text/ssml/ssml_document.h"
#include "text/text_accumulator.h"

namespace voxserve::service {
namespace {

double SecondsBetween(core::Clock::time_point from, core::Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Code points in a piece of UTF-8 that may begin or end inside a character: each is counted
// where it starts (every byte but a continuation byte starts one), so pieces add up.
size_t CountCharacterStarts(std::string_view piece) {
  return static_cast<size_t>(std::count_if(piece.begin(), piece.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

}  // namespace

struct SpeechSession::SentenceResult {
  absl::Status status;
  SynthesisSummary summary;
  size_t audio_bytes = 0;
  int sample_rate = 0;
  std::optional<core::Clock::time_point> first_audio_at;
  std::vector<SegmentTimings> timings;  // in the sentence's own audio
};

// Owned by one sentence's job until OnComplete; its calls arrive serialized on a service thread.
// Audio goes straight to the listener; the completion is posted to the owner's context.
class SpeechSession::SentenceSink final : public SynthesisSink {
 public:
  SentenceSink(std::shared_ptr<Channel> channel, std::shared_ptr<void> keep_alive)
      : channel_(std::move(channel)), keep_alive_(std::move(keep_alive)) {}

  void OnStart(int output_sample_rate) override { result_.sample_rate = output_sample_rate; }
  void OnCacheResult(CacheResult result) override { channel_->listener->OnCacheResult(result); }
  void OnAudio(std::string bytes) override {
    if (!result_.first_audio_at) result_.first_audio_at = core::Clock::now();
    result_.audio_bytes += bytes.size();
    channel_->listener->OnAudio(std::move(bytes), result_.sample_rate);
  }
  void OnTimings(const SegmentTimings& timings) override { result_.timings.push_back(timings); }
  void OnComplete(const absl::Status& status, const SynthesisSummary& summary) override {
    result_.status = status;
    result_.summary = summary;
    // After every OnAudio of this sentence: the report follows its audio.
    channel_->post(
        [channel = channel_, keep_alive = keep_alive_, result = std::move(result_)]() mutable {
          if (channel->session != nullptr) channel->session->OnSentenceComplete(std::move(result));
        });
  }
  size_t BufferedBytes() const override { return channel_->listener->QueuedAudioBytes(); }

 private:
  const std::shared_ptr<Channel> channel_;
  const std::shared_ptr<void> keep_alive_;
  SentenceResult result_;
};

absl::StatusOr<std::unique_ptr<SpeechSession>> SpeechSession::Create(
    TtsService& service, SessionOptions options, Listener& listener, SessionPost post,
    std::weak_ptr<void> keep_alive) {
  // Refusals count in requests_rejected_total as Synthesize's do (SplitterForVoice counts its own).
  if (absl::Status status = CheckRequestOptions(options.request, service.config()); !status.ok()) {
    return service.RejectUnparsed(status);
  }
  if (core::Clock::now() >= options.deadline) {
    return absl::DeadlineExceededError("the stream's deadline has passed");
  }
  absl::StatusOr<const text::SentenceSplitter*> splitter =
      service.SplitterForVoice(options.request);
  if (!splitter.ok()) return splitter.status();
  return std::unique_ptr<SpeechSession>(new SpeechSession(
      service, std::move(options), **splitter, listener, std::move(post), std::move(keep_alive)));
}

SpeechSession::SpeechSession(TtsService& service, SessionOptions options,
                             const text::SentenceSplitter& splitter, Listener& listener,
                             SessionPost post, std::weak_ptr<void> keep_alive)
    : service_(service),
      options_(std::move(options)),
      listener_(listener),
      channel_(std::make_shared<Channel>(Channel{std::move(post), &listener, this})),
      keep_alive_(std::move(keep_alive)),
      accumulator_(std::make_unique<text::TextAccumulator>(
          splitter, static_cast<size_t>(std::max(1, service.config().max_segment_chars)))) {}

SpeechSession::~SpeechSession() {
  channel_->session = nullptr;
  if (job_ != nullptr) job_->Cancel();
}

bool SpeechSession::HasUnspokenText() const {
  return Busy() || accumulator_->pending_bytes() > 0 || !ssml_document_.empty() ||
         !undecided_.empty();
}

absl::Status SpeechSession::AddText(std::string_view piece) {
  if (state_ != State::kOpen) return absl::FailedPreconditionError("the stream takes no more text");
  if (absl::Status status = CheckInputLimit(piece); !status.ok()) {
    return service_.RejectUnparsed(status);
  }
  if (absl::Status status = Take(piece, /*final=*/false); !status.ok()) return status;
  input_chars_ += CountCharacterStarts(piece);
  Advance();
  return absl::OkStatus();
}

// The one check of a stream's text against the service's limits (SessionOptions).
absl::Status SpeechSession::CheckInputLimit(std::string_view piece) const {
  const text::InputLimits& limits = service_.config().limits;
  if (options_.whole_text) return text::CheckInput(piece, limits, "text");
  const size_t total = input_chars_ + CountCharacterStarts(piece);
  if (total <= limits.max_stream_input_chars) return absl::OkStatus();
  return core::PayloadTooLarge("the stream's text would pass " +
                                   std::to_string(limits.max_stream_input_chars) +
                                   " characters (limits.max_stream_input_chars)",
                               "text");
}

absl::Status SpeechSession::Take(std::string_view piece, bool final) {
  if (!ssml_) {
    undecided_ += piece;
    const std::string& format = options_.request.input_format;
    if (!format.empty()) {
      ssml_ = format == "ssml";
    } else {
      // Text with nothing speakable yet (spaces, "...") decides nothing either.
      const text::ssml::StreamStart start = text::ssml::ClassifyStreamStart(undecided_);
      const bool open = start == text::ssml::StreamStart::kUndecided ||
                        (!text::HasSpeakableCharacters(undecided_) &&
                         undecided_.size() <= text::ssml::kMaxUndecidedStreamBytes);
      if (open && !final) return absl::OkStatus();
      if (undecided_.find_first_not_of(" \t\r\n") == std::string::npos) {
        // Only spaces by a flush: still nothing said (ElevenLabs' streams open with " ").
        absl::Status status = Queue(accumulator_->Append(undecided_));
        undecided_.clear();
        return status;
      }
      ssml_ =
          open ? text::ssml::LooksLikeSsml(undecided_) : start == text::ssml::StreamStart::kSsml;
    }
    piece = undecided_;
  }
  absl::Status status = absl::OkStatus();
  if (*ssml_) {
    // Spaces before the document (ElevenLabs' streams open with " ") would put an XML
    // declaration off the start.
    if (ssml_document_.empty())
      piece.remove_prefix(std::min(piece.find_first_not_of(" \t\r\n"), piece.size()));
    ssml_document_ += piece;
  } else {
    status = Queue(accumulator_->Append(piece));
  }
  undecided_.clear();  // `piece` may view it: cleared only now
  return status;
}

void SpeechSession::QueueDocument() {
  if (ssml_document_.empty()) return;
  waiting_.push_back({std::move(ssml_document_), core::Clock::now(), true});
  ssml_document_.clear();
}

absl::Status SpeechSession::Flush() {
  if (state_ != State::kOpen) return absl::FailedPreconditionError("the stream takes no more text");
  if (absl::Status status = Take("", /*final=*/true); !status.ok()) return status;
  QueueDocument();
  if (absl::Status status = Queue(accumulator_->Flush()); !status.ok()) return status;
  Advance();
  return absl::OkStatus();
}

absl::Status SpeechSession::End() {
  if (state_ != State::kOpen) return absl::FailedPreconditionError("the stream takes no more text");
  if (absl::Status status = Take("", /*final=*/true); !status.ok()) return status;
  QueueDocument();
  if (absl::Status status = Queue(accumulator_->Flush()); !status.ok()) return status;
  state_ = State::kInputEnded;
  Advance();
  return absl::OkStatus();
}

void SpeechSession::Drain() {
  if (state_ != State::kOpen && state_ != State::kInputEnded) return;
  state_ = State::kDraining;
  Advance();
}

void SpeechSession::Abort(absl::Status status) {
  if (state_ == State::kEnding || state_ == State::kEnded) return;
  state_ = State::kEnding;
  ending_ = SessionEnd{std::move(status)};
  waiting_.clear();
  if (job_ != nullptr) {
    job_->Cancel();  // OnSentenceComplete finishes
  } else {
    Advance();
  }
}

void SpeechSession::ResumeAudio() {
  std::shared_ptr<SynthesisJob> job;
  {
    std::lock_guard lock(job_mutex_);
    job = job_;
  }
  if (job != nullptr) job->Resume();  // cheap when it is not paused
  // A next sentence held back for the client's unread audio: try again on the owner's context.
  if (held_back_.exchange(false)) {
    channel_->post([channel = channel_, keep_alive = keep_alive_.lock()] {
      if (channel->session != nullptr) channel->session->Advance();
    });
  }
}

SynthesisSummary SpeechSession::Totals() const {
  SynthesisSummary totals = totals_;
  if (first_audio_at_) {
    totals.time_to_first_audio_seconds = SecondsBetween(options_.started_at, *first_audio_at_);
  }
  totals.total_seconds = SecondsBetween(options_.started_at, core::Clock::now());
  return totals;
}

absl::Status SpeechSession::Queue(absl::StatusOr<std::vector<std::string>> sentences) {
  if (!sentences.ok()) return sentences.status();
  const core::Clock::time_point now = core::Clock::now();
  for (std::string& text : *sentences) waiting_.push_back({std::move(text), now});
  return absl::OkStatus();
}

absl::StatusOr<SynthesisRequest> SpeechSession::SentenceRequest(const Sentence& sentence) const {
  SynthesisRequest request = options_.request;
  request.text = sentence.text;
  request.text_field = "text";
  // A plain stream's sentence that happens to start with "<speak" is still text.
  request.input_format = ssml_.value_or(false) ? "ssml" : "text";
  request.streaming = true;
  request.continues_stream = sentences_started_ > 0;
  request.stream_sentence = true;
  request.whole_file = options_.whole_file;
  request.audio_seconds_before = totals_.audio_seconds;
  request.context.request_id += "/" + std::to_string(sentences_started_);
  request.context.received_at = sentence.completed_at;
  request.context.cancellation = std::make_shared<core::CancellationToken>();
  if (options_.deadline != core::Clock::time_point::max()) {
    if (core::Clock::now() >= options_.deadline) {
      return absl::DeadlineExceededError("the stream's deadline has passed");
    }
    // The service counts the timeout from received_at (when the sentence was complete), so the
    // time left is measured from there too: measured from now, a sentence that waited for its
    // turn would lose its wait twice and the stream would end at about half its deadline.
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(options_.deadline -
                                                                      sentence.completed_at);
    left = std::min(left, std::chrono::milliseconds(service_.config().max_timeout_ms));
    request.timeout = request.timeout ? std::min(*request.timeout, left) : left;
  }
  return request;
}

void SpeechSession::Advance() {
  while (job_ == nullptr && state_ != State::kEnded) {
    if (ending_) return Finish(*std::move(ending_));
    if (state_ == State::kDraining) {
      SessionEnd end{core::Draining("server is shutting down")};
      end.dropped_text =
          !waiting_.empty() || accumulator_->pending_bytes() > 0 || !ssml_document_.empty();
      return Finish(std::move(end));
    }
    if (waiting_.empty()) {
      if (state_ != State::kInputEnded) return;
      if (sentences_started_ == 0 && sentences_skipped_ > 0) {
        return Finish({core::InvalidArgument("text has nothing to speak", "text", "empty_input")});
      }
      return Finish({absl::OkStatus()});
    }
    // Each sentence is a job of its own, whose first segment always runs: the stream's buffer
    // bound is kept here, between sentences (issue 39: a client that never read got every
    // sentence synthesized and queued, ~17 MB/s). Waiting sentences then fill up, reading
    // stops, and the write timeout cuts such a client off.
    const auto client_behind = [&] {
      return channel_->listener->QueuedAudioBytes() > service_.config().stream_buffer_bytes;
    };
    if (client_behind()) {
      held_back_.store(true);
      // Audio written meanwhile would have found nothing held back: look once more.
      if (client_behind()) return;
      held_back_.store(false);
    }
    Sentence sentence = std::move(waiting_.front());
    waiting_.pop_front();
    // The empty-sentence rule (see the header): skipped, not an error, and not a request the
    // service refused either (no rejection is counted).
    if (!text::HasSpeakableCharacters(sentence.text)) {
      ++sentences_skipped_;
      continue;
    }
    absl::StatusOr<std::shared_ptr<SynthesisJob>> job = [&] {
      absl::StatusOr<SynthesisRequest> request = SentenceRequest(sentence);
      if (!request.ok()) return absl::StatusOr<std::shared_ptr<SynthesisJob>>(request.status());
      return service_.Synthesize(*std::move(request),
                                 std::make_shared<SentenceSink>(channel_, keep_alive_.lock()));
    }();
    if (!job.ok()) {
      // Whatever else the service finds unspeakable: the same rule.
      if (core::DetailOf(job.status()).code == "empty_input") {
        ++sentences_skipped_;
        continue;
      }
      state_ = State::kEnding;
      ending_ = SessionEnd{job.status()};
      waiting_.clear();
      continue;
    }
    {
      std::lock_guard lock(job_mutex_);
      job_ = *std::move(job);
    }
    current_ = std::move(sentence);
    ++sentences_started_;
  }
}

void SpeechSession::OnSentenceComplete(SentenceResult result) {
  {
    std::lock_guard lock(job_mutex_);
    job_.reset();
  }
  if (state_ == State::kEnded) return;
  if (!ending_ && !result.status.ok()) {
    state_ = State::kEnding;
    ending_ = SessionEnd{result.status};
    waiting_.clear();
  }
  if (!ending_) {
    // Each sentence is a request of its own: its words move behind the stream's earlier audio.
    const double start = totals_.audio_seconds;
    for (SegmentTimings& segment : result.timings) {
      segment.start_s += start;
      segment.end_s += start;
      for (audio::WordTiming& word : segment.words) {
        word.start_s += start;
        word.end_s += start;
      }
    }
    if (current_.ssml) {
      // Reported as spoken (the segments' text, markup gone), so that alignments built from the
      // report (ElevenLabs' characters) cover what was heard.
      std::string spoken;
      for (const SegmentTimings& segment : result.timings) {
        if (!spoken.empty()) spoken += ' ';
        spoken += segment.text;
      }
      current_.text = std::move(spoken);
    }
    totals_.AddSentence(result.summary);
    if (!first_audio_at_) first_audio_at_ = result.first_audio_at;
    listener_.OnSentenceDone({sentences_started_ - 1, std::move(current_.text), result.audio_bytes,
                              result.sample_rate, result.summary, start,
                              std::move(result.timings)});
  }
  Advance();
}

void SpeechSession::Finish(SessionEnd end) {
  state_ = State::kEnded;
  ending_.reset();
  waiting_.clear();
  end.totals = Totals();
  listener_.OnEnd(end);  // last: the owner may destroy the session in it
}

}  // namespace voxserve::service
