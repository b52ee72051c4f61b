#include "transport/http/speech_handlers.h"

#include "transport/http/error_response.h"
#include "transport/http/http_synthesis_sink.h"
#include "transport/http/speech_request_parser.h"

namespace voxserve::transport::http {
namespace {

using Parser = absl::StatusOr<ParsedSpeechRequest> (*)(const HttpRequest&);

// Runs on an I/O thread: parse, hand to the service (which never blocks), return.
void HandleSpeech(service::TtsService& service, Parser parse,
                  const std::shared_ptr<HttpExchange>& exchange) {
  auto parsed = parse(exchange->request());
  if (!parsed.ok()) return exchange->Respond(ErrorResponse(parsed.status()));
  service::SynthesisRequest& request = parsed->synthesis;
  request.context.request_id = exchange->request_id();

  auto sink = std::make_shared<HttpSynthesisSink>(exchange, parsed->stream, request.format);
  auto job = service.Synthesize(std::move(request), sink);
  if (!job.ok()) return exchange->Respond(ErrorResponse(job.status()));

  std::weak_ptr<service::SynthesisJob> weak_job = *job;
  exchange->OnDrained([weak_job] {
    if (auto job = weak_job.lock()) job->Resume();
  });
  exchange->OnClientGone([weak_job] {
    if (auto job = weak_job.lock()) job->Cancel();
  });
}

}  // namespace

void AddSpeechRoutes(Router& router, service::TtsService& service) {
  router.Add("POST", "/v1/audio/speech", [&service](std::shared_ptr<HttpExchange> exchange) {
    HandleSpeech(service, ParseOpenAiSpeechRequest, exchange);
  });
  for (const char* path : {"/v1/synthesize", "/tts"}) {
    router.Add("POST", path, [&service](std::shared_ptr<HttpExchange> exchange) {
      HandleSpeech(service, ParseSynthesizeRequest, exchange);
    });
  }
}

}  // namespace voxserve::transport::http
