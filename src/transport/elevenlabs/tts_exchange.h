// One ElevenLabs text-to-speech HTTP request run as a service::SpeechSession (the service's
// incremental-text session, so sentences, their order and their per-sentence reports come from
// one place): the text goes in whole, each sentence's audio and its estimated alignment come out
// as the route wants them — one file (convert), a chunked audio stream (/stream), one JSON
// (/with-timestamps) or one JSON line per sentence (/stream/with-timestamps).
// https://elevenlabs.io/docs/api-reference/text-to-speech/convert-with-timestamps
// https://elevenlabs.io/docs/api-reference/text-to-speech/stream-with-timestamps
#pragma once

#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "nlohmann/json.hpp"
#include "service/speech_session.h"
#include "service/tts_service.h"
#include "transport/auth/key_limiter.h"
#include "transport/elevenlabs/tts_request.h"
#include "transport/http/http_exchange.h"

namespace voxserve::transport::elevenlabs {

enum class TtsRoute { kConvert, kStream, kWithTimestamps, kStreamWithTimestamps };

using Strand = boost::asio::strand<boost::asio::thread_pool::executor_type>;

// Shared: held by the exchange's callbacks and by each running sentence's sink. Every method
// but OnAudio/QueuedAudioBytes (service threads) runs on its own strand, which serializes the
// session's calls and events.
class TtsExchange final : public std::enable_shared_from_this<TtsExchange>,
                          private service::SpeechSession::Listener {
 public:
  // Called on an I/O thread; the work continues on `strand`. The service outlives the exchange.
  static void Start(service::TtsService& service, Strand strand,
                    std::shared_ptr<http::HttpExchange> exchange, TtsRequest request,
                    TtsRoute route, auth::Admission admission);

  TtsExchange(service::TtsService& service, Strand strand,
              std::shared_ptr<http::HttpExchange> exchange, TtsRequest request, TtsRoute route,
              auth::Admission admission);
  ~TtsExchange() override;

 private:
  void Run();
  void StartStreamOnce();

  // service::SpeechSession::Listener
  void OnAudio(std::string bytes, int sample_rate) override;
  size_t QueuedAudioBytes() const override;
  void OnCacheResult(service::CacheResult result) override;
  void OnSentenceDone(const service::SentenceReport& report) override;
  void OnEnd(const service::SessionEnd& end) override;

  service::TtsService& service_;
  Strand strand_;
  const std::shared_ptr<http::HttpExchange> exchange_;
  TtsRequest request_;
  const TtsRoute route_;
  auth::Admission admission_;
  std::unique_ptr<service::SpeechSession> session_;

  std::mutex mutex_;            // OnAudio (service thread) against the strand's readers
  std::string sentence_audio_;  // guarded by mutex_: the current sentence's bytes (buffered routes)
  bool started_ = false;        // guarded by mutex_: the chunked response has begun
  // guarded by mutex_: the sentences' cache results so far, combined (X-Cache): a stream's
  // header carries its first sentence's.
  std::optional<service::CacheResult> cache_result_;

  // Strand only.
  std::string audio_;         // the whole request's bytes (kConvert, kWithTimestamps)
  double audio_seconds_ = 0;  // before the next sentence: its alignment's offset
  nlohmann::json characters_ = nlohmann::json::array();
  nlohmann::json starts_ = nlohmann::json::array();
  nlohmann::json ends_ = nlohmann::json::array();
};

}  // namespace voxserve::transport::elevenlabs
