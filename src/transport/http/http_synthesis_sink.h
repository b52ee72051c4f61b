// Delivers a synthesis to an HTTP client: one complete response, a chunked audio stream, or
// OpenAI's server-sent events (speech.audio.delta / speech.audio.done); with timestamps
// (docs/timings.md) a whole file is a JSON body {audio, timestamps} and SSE gets a
// speech.audio.timestamps event after each sentence's audio.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "audio/audio_format.h"
#include "service/synthesis_request.h"
#include "transport/auth/key_limiter.h"
#include "transport/http/http_exchange.h"
#include "transport/http/speech_request_parser.h"

namespace voxserve::transport::http {

// Owned by the service's job until OnComplete; calls arrive serialized on a service thread and
// are forwarded to the exchange (itself safe cross thread).
class HttpSynthesisSink final : public service::SynthesisSink {
 public:
  // `admission` (the caller's concurrency slot) is released when the synthesis completes.
  HttpSynthesisSink(std::shared_ptr<HttpExchange> exchange, StreamMode mode,
                    audio::AudioFormat format, auth::Admission admission = {},
                    TimestampsMode timestamps = TimestampsMode::kNone);

  void OnStart(int output_sample_rate) override { output_sample_rate_ = output_sample_rate; }
  void OnCacheResult(service::CacheResult result) override { cache_result_ = result; }
  void OnAudio(std::string bytes) override;
  void OnTimings(const service::SegmentTimings& timings) override;
  void OnComplete(const absl::Status& status, const service::SynthesisSummary& summary) override;
  size_t BufferedBytes() const override { return exchange_->BufferedBytes(); }

 private:
  HttpResponse Head() const;
  void StartIfNeeded();

  std::shared_ptr<HttpExchange> exchange_;
  const StreamMode mode_;
  const audio::AudioFormat format_;
  int output_sample_rate_ = 0;
  service::CacheResult cache_result_ = service::CacheResult::kOff;
  bool started_ = false;
  std::string body_;  // StreamMode::kNone: the file, sent on completion
  auth::Admission admission_;
  const TimestampsMode timestamps_;
  std::vector<service::SegmentTimings> timings_;  // StreamMode::kNone with timestamps
};

}  // namespace voxserve::transport::http
