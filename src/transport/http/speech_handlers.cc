#include "transport/http/speech_handlers.h"

#include "transport/http/cache_headers.h"
#include "transport/http/error_response.h"
#include "transport/http/http_synthesis_sink.h"
#include "transport/http/speech_request_parser.h"

namespace voxserve::transport::http {
namespace {

using Parser = absl::StatusOr<ParsedSpeechRequest> (*)(const HttpRequest&);

// Runs on an I/O thread: parse, hand to the service (which never blocks), return.
void HandleSpeech(service::TtsService& service, const auth::Authenticator* authenticator,
                  Parser parse, const std::shared_ptr<HttpExchange>& exchange) {
  auto parsed = parse(exchange->request());
  if (!parsed.ok())
    return exchange->Respond(ErrorResponse(service.RejectUnparsed(parsed.status())));
  service::SynthesisRequest& request = parsed->synthesis;
  request.context.request_id = exchange->request_id();
  request.allowed_models = exchange->auth().allowed_models;
  request.cache_policy = CachePolicyOf(exchange->request());

  auth::Admission admission;
  if (authenticator != nullptr) {
    auto admitted = authenticator->Admit(exchange->auth());
    if (!admitted.ok()) return exchange->Respond(ErrorResponse(admitted.status()));
    admission = std::move(*admitted);
  }
  auto sink = std::make_shared<HttpSynthesisSink>(exchange, parsed->stream, request.format,
                                                  std::move(admission), parsed->timestamps);
  if (!request.prompt_audio.empty()) {
    // ref_audio: cloned off this thread first; refusals come back through the sink.
    std::shared_ptr<service::PendingJob> pending =
        service.SynthesizeWithPrompt(std::move(request), sink);
    exchange->OnDrained([pending] { pending->Resume(); });
    exchange->OnClientGone([pending] { pending->Cancel(); });
    return;
  }
  auto job = service.Synthesize(std::move(request), sink);
  if (!job.ok()) return exchange->Respond(ErrorResponse(job.status()));

  // The exchange holds the job while it lasts: a paused job has nothing else keeping it alive
  // (no segment in the scheduler, nothing on its strand). The session drops these callbacks when
  // the exchange ends, which breaks the job → sink → exchange → job cycle.
  std::shared_ptr<service::SynthesisJob> running = *std::move(job);
  exchange->OnDrained([running] { running->Resume(); });
  exchange->OnClientGone([running] { running->Cancel(); });
}

}  // namespace

void AddSpeechRoutes(Router& router, service::TtsService& service,
                     const auth::Authenticator* authenticator) {
  router.Add("POST", "/v1/audio/speech",
             [&service, authenticator](std::shared_ptr<HttpExchange> exchange) {
               HandleSpeech(service, authenticator, ParseOpenAiSpeechRequest, exchange);
             });
  for (const char* path : {"/v1/synthesize", "/tts"}) {
    router.Add("POST", path, [&service, authenticator](std::shared_ptr<HttpExchange> exchange) {
      HandleSpeech(service, authenticator, ParseSynthesizeRequest, exchange);
    });
  }
}

}  // namespace voxserve::transport::http
