// The Wyoming protocol (wyoming://host:port, Home Assistant's; docs/wyoming.md) to one endpoint,
// one TCP connection per call: Synthesize sends one `synthesize` event {text, voice: {name}} and
// passes the audio-chunks on as they arrive until audio-stop; ListVoices asks `describe`. The
// protocol has no models, health or API keys: those calls are kUnimplemented, and model, speed
// and instructions are not sent (a voice name may be "<model>/<voice>", as info lists them).
//
// The audio is raw 16-bit PCM at the voice's rate (audio-start says which): "pcm" as it is,
// "wav" with a header (a whole file, or "unknown length" when streaming); other formats are
// refused (kInvalidOptions). An error event is the error REST would give (its code mapped to the
// HTTP status: voice_not_found 404, queue_full 429, ...); after audio it is a broken stream.
#pragma once

#include <string>
#include <vector>

#include "client/client_options.h"
#include "client/endpoint.h"
#include "client/transport.h"

namespace voxserve::client {

// Safe cross thread: each call has its own connection and io_context; the rest is read-only.
class WyomingTransport final : public Transport {
 public:
  WyomingTransport(Endpoint endpoint, const ClientOptions& options);

  Outcome Synthesize(const SpeechRequest& request, Deadline deadline, SpeechSink& sink) override;
  Outcome ListVoices(const VoiceFilter& filter, Deadline deadline,
                     std::vector<Voice>* voices) override;
  Outcome ListModels(Deadline deadline, std::vector<Model>* models) override;
  Outcome CheckHealth(HealthProbe probe, Deadline deadline, Health* health) override;

  // The HTTP status a Wyoming error code stands for (voxserve's codes; others: 500).
  static int HttpStatusForCode(const std::string& code);

 private:
  const Endpoint endpoint_;
  const Millis connect_timeout_;
};

}  // namespace voxserve::client
