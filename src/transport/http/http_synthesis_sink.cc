#include "transport/http/http_synthesis_sink.h"

#include "absl/strings/escaping.h"
#include "nlohmann/json.hpp"
#include "transport/http/cache_headers.h"
#include "transport/http/error_response.h"

namespace voxserve::transport::http {
namespace {

std::string SseEvent(const nlohmann::json& data) { return "data: " + data.dump() + "\n\n"; }

}  // namespace

HttpSynthesisSink::HttpSynthesisSink(std::shared_ptr<HttpExchange> exchange, StreamMode mode,
                                     audio::AudioFormat format, auth::Admission admission,
                                     TimestampsMode timestamps)
    : exchange_(std::move(exchange)),
      mode_(mode),
      format_(format),
      admission_(std::move(admission)),
      timestamps_(timestamps) {}

void HttpSynthesisSink::OnTimings(const service::SegmentTimings& timings) {
  if (timestamps_ == TimestampsMode::kNone) return;
  switch (mode_) {
    case StreamMode::kNone:
      timings_.push_back(timings);
      return;
    case StreamMode::kAudio:
      return;  // refused by the parser: raw audio has no room for them
    case StreamMode::kSse:
      StartIfNeeded();
      exchange_->WriteStream(SseEvent({{"type", "speech.audio.timestamps"},
                                       {"segment", timings.segment},
                                       {"timestamps_kind", TimingsKindName(timings.kind)},
                                       {"timestamps", TimestampEntries(timings, timestamps_)}}));
      return;
  }
}

HttpResponse HttpSynthesisSink::Head() const {
  HttpResponse head;
  head.status = 200;
  if (mode_ == StreamMode::kSse) {
    head.SetHeader("Content-Type", "text/event-stream");
    head.SetHeader("Cache-Control", "no-cache");
  } else {
    head.SetHeader("Content-Type", std::string(audio::ContentType(format_)));
  }
  // Raw pcm has no header to say its rate; every format gets it for symmetry.
  if (output_sample_rate_ > 0) head.SetHeader("X-Sample-Rate", std::to_string(output_sample_rate_));
  SetCacheHeader(head, cache_result_);
  return head;
}

void HttpSynthesisSink::StartIfNeeded() {
  if (started_) return;
  started_ = true;
  exchange_->StartStream(Head());
}

void HttpSynthesisSink::OnAudio(std::string bytes) {
  switch (mode_) {
    case StreamMode::kNone:
      if (body_.empty()) {
        body_ = std::move(bytes);  // the whole file comes in one piece: no copy of it
      } else {
        body_ += bytes;
      }
      return;
    case StreamMode::kAudio:
      StartIfNeeded();
      exchange_->WriteStream(std::move(bytes));
      return;
    case StreamMode::kSse:
      StartIfNeeded();
      exchange_->WriteStream(
          SseEvent({{"type", "speech.audio.delta"}, {"audio", absl::Base64Escape(bytes)}}));
      return;
  }
}

void HttpSynthesisSink::OnComplete(const absl::Status& status,
                                   const service::SynthesisSummary& summary) {
  admission_.Reset();
  exchange_->AnnotateLog([summary](core::RequestLogEntry& entry) { summary.AddToLog(entry); });
  if (!status.ok()) {
    if (!started_) {
      exchange_->Respond(ErrorResponse(status));
    } else if (mode_ == StreamMode::kSse) {
      nlohmann::json error = nlohmann::json::parse(ErrorJson(status));
      error["type"] = "error";
      exchange_->WriteStream(SseEvent(error));
      exchange_->EndStream();
    } else {
      exchange_->AbortStream();
    }
    return;
  }
  switch (mode_) {
    case StreamMode::kNone: {
      HttpResponse response = Head();
      if (timestamps_ == TimestampsMode::kNone) {
        response.body = std::move(body_);
      } else {
        // Kokoro-FastAPI's captioned speech: the file in base64 beside its timings.
        response.SetHeader("Content-Type", "application/json");
        response.body = nlohmann::json{{"audio", absl::Base64Escape(body_)},
                                       {"audio_format", std::string(audio::FormatName(format_))},
                                       {"sample_rate", output_sample_rate_},
                                       {"audio_seconds", summary.audio_seconds},
                                       {"timestamps_kind", CombinedTimingsKind(timings_)},
                                       {"timestamps", TimestampEntries(timings_, timestamps_)}}
                            .dump();
      }
      exchange_->Respond(std::move(response));
      return;
    }
    case StreamMode::kAudio:
      StartIfNeeded();  // a request whose audio encodes to nothing still gets its headers
      exchange_->EndStream();
      return;
    case StreamMode::kSse: {
      StartIfNeeded();
      // OpenAI reports usage in tokens; characters in and audio seconds out are what we count.
      size_t input = summary.input_chars;
      size_t output = static_cast<size_t>(summary.audio_seconds * 1000);
      exchange_->WriteStream(SseEvent({{"type", "speech.audio.done"},
                                       {"usage",
                                        {{"input_tokens", input},
                                         {"output_tokens", output},
                                         {"total_tokens", input + output}}}}));
      exchange_->EndStream();
      return;
    }
  }
}

}  // namespace voxserve::transport::http
