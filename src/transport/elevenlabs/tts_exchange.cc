#include "transport/elevenlabs/tts_exchange.h"

#include <boost/asio/post.hpp>
#include <utility>

#include "absl/strings/escaping.h"
#include "service/alignment_estimate.h"
#include "transport/elevenlabs/error_body.h"
#include "transport/http/cache_headers.h"

namespace voxserve::transport::elevenlabs {
namespace {

using nlohmann::json;

// ElevenLabs' CharacterAlignmentResponseModel (snake_case on the wire, as the SDK's serializer
// reads it). voxserve speaks the text as written, so `normalized_alignment` is the same.
json AlignmentJson(const json& characters, const json& starts, const json& ends) {
  return {{"characters", characters},
          {"character_start_times_seconds", starts},
          {"character_end_times_seconds", ends}};
}

std::string Dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

void TtsExchange::Start(service::TtsService& service, Strand strand,
                        std::shared_ptr<http::HttpExchange> exchange, TtsRequest request,
                        TtsRoute route, auth::Admission admission) {
  auto self = std::make_shared<TtsExchange>(service, strand, exchange, std::move(request), route,
                                            std::move(admission));
  // The exchange holds `self` through these until it ends, which breaks the cycle.
  exchange->OnDrained([self] {
    boost::asio::post(self->strand_, [self] {
      if (self->session_) self->session_->ResumeAudio();
    });
  });
  exchange->OnClientGone([self] {
    boost::asio::post(self->strand_, [self] {
      if (self->session_) self->session_->Abort(absl::CancelledError("the client went away"));
    });
  });
  boost::asio::post(strand, [self] { self->Run(); });
}

TtsExchange::TtsExchange(service::TtsService& service, Strand strand,
                         std::shared_ptr<http::HttpExchange> exchange, TtsRequest request,
                         TtsRoute route, auth::Admission admission)
    : service_(service),
      strand_(std::move(strand)),
      exchange_(std::move(exchange)),
      request_(std::move(request)),
      route_(route),
      admission_(std::move(admission)) {}

TtsExchange::~TtsExchange() {
  // The last reference may go on any thread; the session is destroyed on its strand, as it asks.
  if (session_) boost::asio::post(strand_, [session = std::move(session_)] {});
}

void TtsExchange::Run() {
  service::SessionOptions options;
  options.request = request_.synthesis;
  options.request.context.request_id = exchange_->request_id();
  options.request.allowed_models = exchange_->auth().allowed_models;
  // One request's text, as /v1's (max_input_chars, empty_input); the whole-file routes' audio
  // is bounded as a whole file's.
  options.whole_text = true;
  options.whole_file = route_ == TtsRoute::kConvert || route_ == TtsRoute::kWithTimestamps;
  // Each event holds the exchange while it runs: the HTTP exchange may drop its callbacks (and
  // with them the last other reference) on its own strand meanwhile.
  service::SessionPost post = [strand = strand_,
                               weak = weak_from_this()](absl::AnyInvocable<void() &&> task) {
    boost::asio::post(strand, [weak, task = std::move(task)]() mutable {
      if (std::shared_ptr<TtsExchange> self = weak.lock()) std::move(task)();
    });
  };
  auto session = service::SpeechSession::Create(service_, std::move(options), *this,
                                                std::move(post), weak_from_this());
  if (!session.ok()) {
    admission_.Reset();
    // Create has counted the refusal already.
    return exchange_->Respond(ErrorResponse(session.status(), exchange_->request_id()));
  }
  session_ = *std::move(session);
  absl::Status status = session_->AddText(request_.text);
  if (status.ok()) status = session_->End();
  if (!status.ok()) session_->Abort(status);
}

void TtsExchange::StartStreamOnce() {
  std::lock_guard lock(mutex_);
  if (started_) return;
  started_ = true;
  http::HttpResponse head;
  head.status = 200;
  head.SetHeader("Content-Type", route_ == TtsRoute::kStreamWithTimestamps
                                     ? std::string("application/json")
                                     : ContentTypeOf(request_.output));
  head.SetHeader("X-Sample-Rate", std::to_string(request_.output.sample_rate));
  http::SetCacheHeader(head, cache_result_.value_or(service::CacheResult::kOff));
  exchange_->StartStream(std::move(head));
}

void TtsExchange::OnCacheResult(service::CacheResult result) {
  std::lock_guard lock(mutex_);
  // hit: every sentence came from the cache; bypass: none was looked up; else miss.
  if (!cache_result_ || *cache_result_ == result) {
    cache_result_ = result;
  } else if (*cache_result_ != service::CacheResult::kOff) {
    cache_result_ = service::CacheResult::kMiss;
  }
}

void TtsExchange::OnAudio(std::string bytes, int /*sample_rate*/) {
  if (route_ == TtsRoute::kStream) {
    StartStreamOnce();
    exchange_->WriteStream(std::move(bytes));
    return;
  }
  std::lock_guard lock(mutex_);
  sentence_audio_ += bytes;
}

size_t TtsExchange::QueuedAudioBytes() const { return exchange_->BufferedBytes(); }

void TtsExchange::OnSentenceDone(const service::SentenceReport& report) {
  std::string audio;
  {
    std::lock_guard lock(mutex_);
    audio = std::exchange(sentence_audio_, {});
  }
  // Offsets are in the request's audio time: this sentence starts where the last one ended
  // (report.start_seconds, where its word timings are placed). Built from the engine's word
  // timings where it reports them.
  service::CharacterAlignment alignment = service::EstimateAlignment(
      report.text, audio_seconds_, report.summary.audio_seconds, report.timings);
  audio_seconds_ += report.summary.audio_seconds;
  switch (route_) {
    case TtsRoute::kStream:
      return;
    case TtsRoute::kConvert:
      audio_ += audio;
      return;
    case TtsRoute::kWithTimestamps:
      audio_ += audio;
      for (size_t i = 0; i < alignment.characters.size(); ++i) {
        characters_.push_back(alignment.characters[i]);
        starts_.push_back(alignment.start_seconds[i]);
        ends_.push_back(alignment.end_seconds[i]);
      }
      return;
    case TtsRoute::kStreamWithTimestamps: {
      json aligned =
          AlignmentJson(alignment.characters, alignment.start_seconds, alignment.end_seconds);
      StartStreamOnce();
      // One JSON object per line: the SDK splits the stream on "\n".
      exchange_->WriteStream(Dump({{"audio_base64", absl::Base64Escape(audio)},
                                   {"alignment", aligned},
                                   {"normalized_alignment", aligned}}) +
                             "\n");
      return;
    }
  }
}

void TtsExchange::OnEnd(const service::SessionEnd& end) {
  admission_.Reset();
  const service::SynthesisSummary totals = end.totals;
  exchange_->AnnotateLog([totals](core::RequestLogEntry& entry) { totals.AddToLog(entry); });
  bool started = false;
  {
    std::lock_guard lock(mutex_);
    started = started_;
  }
  if (!end.status.ok()) {
    if (started) return exchange_->AbortStream();
    return exchange_->Respond(ErrorResponse(end.status, exchange_->request_id()));
  }
  switch (route_) {
    case TtsRoute::kConvert: {
      http::HttpResponse response;
      response.status = 200;
      response.SetHeader("Content-Type", ContentTypeOf(request_.output));
      response.SetHeader("X-Sample-Rate", std::to_string(request_.output.sample_rate));
      {
        std::lock_guard lock(mutex_);
        http::SetCacheHeader(response, cache_result_.value_or(service::CacheResult::kOff));
      }
      response.body = std::move(audio_);
      return exchange_->Respond(std::move(response));
    }
    case TtsRoute::kWithTimestamps: {
      json aligned = AlignmentJson(characters_, starts_, ends_);
      http::HttpResponse response =
          http::JsonResponse(200, Dump({{"audio_base64", absl::Base64Escape(audio_)},
                                        {"alignment", aligned},
                                        {"normalized_alignment", aligned}}));
      {
        std::lock_guard lock(mutex_);
        http::SetCacheHeader(response, cache_result_.value_or(service::CacheResult::kOff));
      }
      return exchange_->Respond(std::move(response));
    }
    case TtsRoute::kStream:
    case TtsRoute::kStreamWithTimestamps:
      StartStreamOnce();  // a request whose audio encodes to nothing still gets its headers
      return exchange_->EndStream();
  }
}

}  // namespace voxserve::transport::elevenlabs
