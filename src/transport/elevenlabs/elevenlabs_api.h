// The ElevenLabs-compatible REST API under /elevenlabs/v1/ (so it never meets voxserve's own
// /v1/voices and /v1/models; ElevenLabs' SDKs take the base URL http://host:port/elevenlabs):
//   POST text-to-speech/{voice_id}[/stream][/with-timestamps | /stream/with-timestamps]
//   GET  voices, GET models
// A thin adapter: requests become service::SynthesisRequest options for a SpeechSession (the
// service validates, resolves voice ids and aliases, and applies its limits); results and errors
// come back in ElevenLabs' shapes (https://elevenlabs.io/docs/api-reference/introduction).
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <memory>
#include <string_view>

#include "service/tts_service.h"
#include "transport/auth/authenticator.h"
#include "transport/http/router.h"

namespace voxserve::transport::elevenlabs {

inline constexpr std::string_view kPathPrefix = "/elevenlabs/v1/";

// Safe cross thread once routes are added. Outlives the HTTP server (declare it before): its
// thread runs the requests' sessions. The service and authenticator outlive it.
class ElevenLabsApi {
 public:
  ElevenLabsApi(service::TtsService& service, const auth::Authenticator* authenticator);
  ~ElevenLabsApi();

  // Every path under kPathPrefix, with ElevenLabs-shaped errors (auth refusals included).
  void AddRoutes(http::Router& router);

 private:
  void Handle(const std::shared_ptr<http::HttpExchange>& exchange);
  void MintSingleUseToken(const std::shared_ptr<http::HttpExchange>& exchange,
                          std::string_view token_type);

  service::TtsService& service_;
  const auth::Authenticator* authenticator_;
  // Bookkeeping only (sessions' events, copying bytes); synthesis and encoding run elsewhere.
  boost::asio::thread_pool pool_{1};
};

}  // namespace voxserve::transport::elevenlabs
