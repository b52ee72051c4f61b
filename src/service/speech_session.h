// One incremental-text stream (WebSocket /v1/audio/speech/stream, gRPC StreamingSynthesize),
// written once: text arrives in pieces as an LLM writes it → whole sentences
// (text::TextAccumulator) → a bounded queue of sentences waiting for their turn → one
// TtsService request per sentence, one after another, so sentence N's audio always precedes
// sentence N+1's → running totals and one final summary. Transports only translate their
// messages into these calls and the Listener's events into their messages.
//
// The empty-sentence rule: a sentence with nothing speakable in it ("...", "—") is skipped, not
// an error, so an LLM's stray punctuation never ends a stream. If the stream ends having had
// text but not one speakable sentence, it ends with the error REST gives the same text:
// InvalidArgument `empty_input`. A stream that never had text (config, then end) ends with an
// ordinary, empty summary.
//
// SSML (docs/ssml.md): a document cannot be cut into sentences before it is whole, so a session
// whose request says input_format "ssml", or whose first text starts with "<speak" when it says
// none, holds its text until Flush or End and speaks what it holds as one document (one
// request; its segments are the document's sentences).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "core/request_context.h"
#include "service/synthesis_job.h"
#include "service/synthesis_request.h"

// Only the session sees the text module; its users (the transports) do not.
namespace voxserve::text {
class SentenceSplitter;
class TextAccumulator;
}  // namespace voxserve::text

namespace voxserve::service {

class TtsService;

// How a session ended; given once, to Listener::OnEnd.
struct SessionEnd {
  // OK: everything asked for was spoken (End). Otherwise why it stopped: the error that ended
  // it (Abort, a refused or failed sentence, `empty_input`), or Draining after Drain().
  absl::Status status;
  // Drain() only: text (queued, or held in the accumulator) was dropped unspoken.
  bool dropped_text = false;
  // Summed over the sentences spoken; time to first audio and total from `started_at`.
  SynthesisSummary totals;
};

struct SessionOptions {
  // Everything of a sentence's request but its text: model, voice, format, speed, instructions,
  // timeout (per sentence, from when it is complete), allowed_models, and in `context` the
  // request id ("<id>/<index>" for each sentence). Checked once, by Create.
  SynthesisRequest request;
  core::Clock::time_point started_at = core::Clock::now();  // totals' timings count from here
  // The whole stream's deadline (e.g. gRPC's): caps each sentence's timeout; once passed, the
  // next sentence ends the session with DeadlineExceeded. max(): none.
  core::Clock::time_point deadline = core::Clock::time_point::max();
  // What the stream is, for the service's limits, which the session applies to the whole
  // stream (not per sentence):
  // - whole_text: the text comes in one AddText, a request in all but name (ElevenLabs' REST
  //   routes). It is checked as Synthesize checks a request's text (text::CheckInput: 400
  //   `empty_input` for nothing to speak, 413 over limits.max_input_chars) before anything is
  //   spoken. Otherwise the text comes in pieces, and all of them together may hold at most
  //   limits.max_stream_input_chars (413 at the piece that passes it).
  // - whole_file: the listener collects the audio into one answer (ElevenLabs' convert), so
  //   limits.max_audio_seconds bounds it; otherwise limits.max_stream_audio_seconds. Either way
  //   the audio of every sentence counts, and the sentence that passes the bound ends the
  //   session with OutputTooLong (413 `output_too_long`).
  bool whole_text = false;
  bool whole_file = false;
};

// How a sentence's completion reaches the owner's serialized context. Called on a service
// thread (safe cross thread); `task` must run serialized with all the owner's other calls into
// the session, after any call under way (never inline inside one).
using SessionPost = std::function<void(absl::AnyInvocable<void() &&> task)>;

// Threading: not thread-safe. The owner (the transport's stream object, which owns the session
// through a unique_ptr) makes every call from one serialized context — the WebSocket's strand, or
// gRPC's reactor under its mutex — and runs the tasks handed to `post` in that same context.
// Listener methods marked "serialized" are called from inside those calls and tasks; OnAudio and
// QueuedAudioBytes come from service threads. ResumeAudio is the one call safe cross thread.
//
// Lifetime: the owner keeps the listener alive while a sentence runs (`keep_alive`, held by each
// sentence's sink, is the means for an owner that is reference counted); it may destroy the
// session at any time on its context: a running sentence is cancelled and its completion, when
// it comes, is dropped.
class SpeechSession {
 public:
  class Listener {
   public:
    virtual ~Listener() = default;
    // Service thread, safe cross thread: encoded bytes of the current sentence, in order.
    virtual void OnAudio(std::string bytes, int sample_rate) = 0;
    // Service thread: bytes given to OnAudio but not yet written to the client. Above the
    // service's stream_buffer_bytes the sentence pauses until ResumeAudio().
    virtual size_t QueuedAudioBytes() const = 0;
    // Service thread: what the response cache did with the current sentence, before its first
    // OnAudio (SynthesisSink::OnCacheResult).
    virtual void OnCacheResult(CacheResult result) { (void)result; }
    // Serialized: after the sentence's last OnAudio.
    virtual void OnSentenceDone(const SentenceReport& report) = 0;
    // Serialized, exactly once, the last call of the session: no sentence runs any more.
    virtual void OnEnd(const SessionEnd& end) = 0;
  };

  // Resolves model and voice (NotFound, PermissionDenied, Unavailable) and checks the options
  // (CheckRequestOptions) before any text: a stream with a bad config never starts.
  // `keep_alive` (usually the owner itself, so the session keeps only this weak reference) is
  // locked and held by each running sentence's sink; may be empty.
  static absl::StatusOr<std::unique_ptr<SpeechSession>> Create(TtsService& service,
                                                               SessionOptions options,
                                                               Listener& listener, SessionPost post,
                                                               std::weak_ptr<void> keep_alive = {});
  ~SpeechSession();

  SpeechSession(const SpeechSession&) = delete;
  SpeechSession& operator=(const SpeechSession&) = delete;

  // A piece of UTF-8, cut anywhere. InvalidArgument (param "text") for bytes that can never be
  // UTF-8, PayloadTooLarge past the input limit (SessionOptions::whole_text); the session is
  // unchanged then (the owner decides whether to Abort).
  absl::Status AddText(std::string_view piece);
  // Speak what is held now, even an unfinished sentence.
  absl::Status Flush();
  // No more text: speak the rest, then OnEnd(OK) after the last sentence.
  absl::Status End();
  // Shutdown: the running sentence finishes, nothing more starts; OnEnd(Draining).
  void Drain();
  // Ends the session with `status`: queued text is dropped, the running sentence cancelled;
  // OnEnd follows its completion (at once when none runs). Ignored once the end is decided.
  void Abort(absl::Status status);
  // The transport has written audio: a sentence paused for this client may go on.
  void ResumeAudio();

  // Whether text is still taken (not ended, draining or aborted).
  bool TakesText() const { return state_ == State::kOpen; }
  // The waiting queue is full: the owner stops reading from the client until it is not (the
  // protocol's flow control then holds the sender back).
  bool Backlogged() const { return waiting_.size() >= kMaxWaitingSentences; }
  // A sentence runs or waits for its turn.
  bool Busy() const { return job_ != nullptr || !waiting_.empty(); }
  // Busy, or text held for a sentence not yet complete.
  bool HasUnspokenText() const;
  bool Ended() const { return state_ == State::kEnded; }
  int sentences_started() const { return sentences_started_; }
  // Totals so far, with timings as of now.
  SynthesisSummary Totals() const;

  // Complete sentences that may wait for their turn. Each is at most limits.max_segment_chars,
  // so a stream holds a few tens of KiB of text at most, plus what the transport has read.
  static constexpr size_t kMaxWaitingSentences = 16;

 private:
  enum class State { kOpen, kInputEnded, kDraining, kEnding, kEnded };
  struct Sentence {
    std::string text;
    core::Clock::time_point completed_at;  // its timeout and timings count from here
    bool ssml = false;                     // an SSML document (reported as the text it spoke)
  };
  struct SentenceResult;
  class SentenceSink;
  // What a sentence's sink reaches, shared with it: the session may be gone when it completes.
  struct Channel {
    SessionPost post;
    Listener* listener;
    SpeechSession* session;  // null once destroyed; read and written only on the owner's context
  };

  SpeechSession(TtsService& service, SessionOptions options, const text::SentenceSplitter& splitter,
                Listener& listener, SessionPost post, std::weak_ptr<void> keep_alive);

  absl::Status CheckInputLimit(std::string_view piece) const;
  // Takes `piece` into the accumulator or the SSML document, once ssml_ is decided; before that
  // it waits in undecided_ (a tag may be split across pieces). `final`: no more text comes
  // before a flush or the end, so decide on what there is.
  absl::Status Take(std::string_view piece, bool final);
  // An SSML stream's held document, queued as one sentence.
  void QueueDocument();
  absl::Status Queue(absl::StatusOr<std::vector<std::string>> sentences);
  // Starts the next sentence when none runs, or ends the session when nothing is left to do.
  void Advance();
  absl::StatusOr<SynthesisRequest> SentenceRequest(const Sentence& sentence) const;
  void OnSentenceComplete(SentenceResult result);
  void Finish(SessionEnd end);

  TtsService& service_;
  const SessionOptions options_;
  Listener& listener_;
  const std::shared_ptr<Channel> channel_;
  const std::weak_ptr<void> keep_alive_;

  State state_ = State::kOpen;
  const std::unique_ptr<text::TextAccumulator> accumulator_;
  std::deque<Sentence> waiting_;
  // The sentence being synthesized. Written on the owner's context under job_mutex_, which
  // ResumeAudio (cross thread) takes to read it.
  std::shared_ptr<SynthesisJob> job_;
  mutable std::mutex job_mutex_;
  // The next sentence waits for the client to read its audio (Advance sets it; ResumeAudio,
  // from any thread, clears it and posts Advance).
  std::atomic<bool> held_back_{false};
  Sentence current_;
  size_t input_chars_ = 0;  // code points taken by AddText so far
  // Whether the stream is SSML: decided by input_format, else by its first characters
  // (text::ssml::ClassifyStreamStart), which wait in undecided_ until they can say. An SSML
  // stream's text waits in ssml_document_ until Flush or End.
  std::optional<bool> ssml_;
  std::string undecided_;
  std::string ssml_document_;
  int sentences_started_ = 0;
  int sentences_skipped_ = 0;         // nothing speakable in them
  std::optional<SessionEnd> ending_;  // decided, waits for the running sentence to complete

  SynthesisSummary totals_;
  std::optional<core::Clock::time_point> first_audio_at_;
};

}  // namespace voxserve::service
