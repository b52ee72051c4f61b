#include "transport/elevenlabs/input_stream.h"

#include <deque>
#include <utility>

#include "core/error.h"
#include "core/structured_log.h"
#include "service/alignment_estimate.h"
#include "transport/elevenlabs/elevenlabs_api.h"
#include "transport/http/error_response.h"
#include "transport/http/query_string.h"
#include "transport/http/text_normalization_field.h"

namespace voxserve::transport::elevenlabs {
namespace {

using websocket::CloseCode;

constexpr std::string_view kTtsPrefix = "text-to-speech/";
constexpr std::string_view kStreamInput = "/stream-input";
constexpr std::string_view kMultiStreamInput = "/multi-stream-input";
constexpr const char* kRoute = "/elevenlabs/v1/text-to-speech/{voice_id}/stream-input";
// ElevenLabs' model ids (GET /v1/models there) mean voxserve's default model, as over REST.
constexpr std::string_view kElevenLabsModelPrefix = "eleven_";
// Open contexts on one multi-stream socket: ElevenLabs allows a handful (its multi-context guide);
// each holds a SpeechSession and its waiting sentences, so voxserve bounds them too.
constexpr size_t kMaxOpenContexts = 8;
// Text read but not yet taken by a session whose waiting queue is full: past this the socket is
// no longer read (TCP holds the client back). The size of a few messages of long text.
constexpr size_t kMaxPendingBytes = 256 * 1024;

// "{voice_id}/stream-input" or "{voice_id}/multi-stream-input" after the prefix; the voice id.
std::optional<std::pair<std::string, bool>> ParsePath(std::string_view path) {
  const std::string prefix = std::string(kPathPrefix) + std::string(kTtsPrefix);
  if (!path.starts_with(prefix)) return std::nullopt;
  std::string_view rest = path.substr(prefix.size());
  for (auto [suffix, multi] :
       {std::pair{kStreamInput, false}, std::pair{kMultiStreamInput, true}}) {
    if (rest.size() > suffix.size() && rest.ends_with(suffix)) {
      std::string_view voice = rest.substr(0, rest.size() - suffix.size());
      if (voice.find('/') != std::string_view::npos) return std::nullopt;
      return std::pair{std::string(voice), multi};
    }
  }
  return std::nullopt;
}

bool Blank(std::string_view text) {
  return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

}  // namespace

bool ServesInputStream(std::string_view path) { return ParsePath(path).has_value(); }

websocket::ProtocolRoute InputStreamRoute(const auth::Authenticator* authenticator) {
  return {kRoute, ServesInputStream,
          [authenticator](websocket::ProtocolEnv env) {
            return std::unique_ptr<websocket::StreamProtocol>(
                new InputStream(std::move(env), authenticator));
          },
          /*authenticates_in_stream=*/true};
}

// One stream (stream-input) or context (multi-stream-input): its session, and its sentence's audio
// gathered until the sentence is done, when it goes out with the sentence's alignment.
class InputStream::Context final : public service::SpeechSession::Listener {
 public:
  Context(InputStream& owner, std::optional<std::string> id) : owner_(owner), id(std::move(id)) {}

  // Service thread.
  void OnAudio(std::string bytes, int /*sample_rate*/) override {
    std::lock_guard lock(mutex_);
    audio_ += bytes;
  }
  size_t QueuedAudioBytes() const override { return owner_.env_.output.QueuedAudioBytes(); }

  void OnSentenceDone(const service::SentenceReport& report) override {
    std::string audio;
    {
      std::lock_guard lock(mutex_);
      audio = std::exchange(audio_, {});
    }
    // Offsets in the context's audio time: this sentence starts where the last one ended (the
    // session places its word timings there too). The space between sentences is a character
    // too (as in ElevenLabs' alignment), so a client that joins `chars` (LiveKit's timed words)
    // gets the words apart. Built from the engine's word timings where it reports them.
    const std::string text = sentences_ == 0 ? report.text : " " + report.text;
    ++sentences_;
    service::CharacterAlignment alignment = service::EstimateAlignment(
        text, audio_seconds, report.summary.audio_seconds, report.timings);
    audio_seconds += report.summary.audio_seconds;
    owner_.audio_seconds_ += report.summary.audio_seconds;
    owner_.chars_ += report.summary.input_chars;
    if (stopped || owner_.closing_ || owner_.ended_) return;
    owner_.env_.metrics.CountMessage("out", "audio");
    owner_.env_.output.SendAudioEvent(AudioMessage(audio, alignment, id));
  }

  void OnEnd(const service::SessionEnd& end) override { owner_.OnContextEnded(*this, end); }

  InputStream& owner_;
  const std::optional<std::string> id;  // none on stream-input: replies carry no contextId
  std::unique_ptr<service::SpeechSession> session;
  bool had_text = false;     // something not blank was added
  bool flushed = true;       // no text since the last flush
  bool closed = false;       // its input has ended (close_context, or stream-input's "")
  bool stopped = false;      // close_context mid-utterance: its audio stops now
  bool ended = false;        // OnEnd has come
  std::deque<Step> pending;  // waits for room in the session's queue (Feed)

  size_t PendingBytes() const {
    size_t bytes = 0;
    for (const Step& step : pending) bytes += step.text.size();
    return bytes;
  }
  double audio_seconds = 0;

 private:
  int sentences_ = 0;  // spoken so far
  std::mutex mutex_;
  std::string audio_;
};

InputStream::InputStream(websocket::ProtocolEnv env, const auth::Authenticator* authenticator)
    : env_(std::move(env)), authenticator_(authenticator) {}

InputStream::~InputStream() {
  contexts_.clear();  // before the rest: their sessions cancel what still runs
  WriteLog();
}

absl::Status InputStream::Setup() {
  std::string_view target = env_.caller.target;
  const size_t question = target.find('?');
  auto path = ParsePath(target.substr(0, question));
  if (!path) return core::NotFound("no such WebSocket route", {}, "route_not_found");
  voice_id_ = path->first;
  multi_ = path->second;
  auto query = http::ParseQuery(question == std::string_view::npos ? std::string_view()
                                                                   : target.substr(question + 1));
  if (!query.ok()) return query.status();
  std::string format_name(kDefaultOutputFormat);
  if (auto it = query->find("output_format"); it != query->end()) format_name = it->second;
  auto output = ParseOutputFormat(format_name);
  if (!output.ok()) return output.status();
  output_ = *output;
  request_.text_field = "text";
  request_.voice = voice_id_;
  request_.streaming = true;
  request_.format = output_.format;
  request_.sample_rate = output_.sample_rate;
  if (auto it = query->find("model_id"); it != query->end()) {
    if (!it->second.starts_with(kElevenLabsModelPrefix)) request_.model = it->second;
  }
  if (auto it = query->find(http::kTextNormalizationField); it != query->end()) {
    const nlohmann::json mode(it->second);
    auto normalize = http::ParseTextNormalization(&mode);
    if (!normalize.ok()) return normalize.status();
    request_.normalize_text = *normalize;
  }
  // SSML (docs/ssml.md): the text is held until a flush (or the end) and spoken as one document.
  if (auto it = query->find("enable_ssml_parsing"); it != query->end() && it->second == "true") {
    request_.input_format = "ssml";
  }
  // Accepted and ignored: inactivity_timeout (websocket.idle_timeout_ms applies), sync_alignment
  // (audio and alignment always come together), auto_mode, enable_logging, language_code,
  // optimize_streaming_latency.
  set_up_ = true;
  return absl::OkStatus();
}

// "Your ElevenLabs API key. This can only be included in the first message and is not needed if
// present in the header" (the SDK's InitializeConnection). Checked as the HTTP session checks
// headers: the same keys, limits and 401 reasons.
absl::Status InputStream::Authenticate(const InputMessage& first) {
  if (env_.caller.authenticated || authenticator_ == nullptr) return absl::OkStatus();
  const std::string key = first.api_key.value_or("");
  const std::string authorization = first.authorization.value_or("");
  auto caller = authenticator_->Authenticate(
      [&](std::string_view name) -> std::string_view {
        if (name == "xi-api-key") return key;
        if (name == "authorization") return authorization;
        return {};
      },
      env_.caller.auth.client_subject, auth::Resource::kApi);
  if (!caller.ok()) return caller.status();
  auto admitted = authenticator_->Admit(*caller);
  if (!admitted.ok()) return admitted.status();
  env_.caller.auth = *std::move(caller);
  env_.caller.admission = *std::move(admitted);
  env_.caller.authenticated = true;
  return absl::OkStatus();
}

void InputStream::OnMessage(std::string_view text) {
  if (ended_ || closing_) return;
  absl::Status status = set_up_ ? absl::OkStatus() : Setup();
  absl::StatusOr<InputMessage> message = ParseInputMessage(text);
  env_.metrics.CountMessage("in", message.ok() ? "text" : "invalid");
  if (status.ok()) status = message.status();
  // What the service never saw is counted as its refusal; the service counts its own (Create).
  if (!status.ok()) return Fail(env_.service.RejectUnparsed(status));
  status = Authenticate(*message);
  if (status.ok()) status = Take(*message);
  if (!status.ok()) return Fail(status, message->context_id);
  UpdateReading();
}

absl::StatusOr<InputStream::Context*> InputStream::ContextFor(const InputMessage& message) {
  std::string key = multi_ ? *message.context_id : std::string();
  if (auto it = contexts_.find(key); it != contexts_.end()) return it->second.get();
  if (!multi_ && contexts_started_ > 0) {
    return core::InvalidArgument("no message may follow the end of input ({\"text\": \"\"})", {},
                                 "message_after_close");
  }
  if (!multi_ && !message.text) {
    return core::InvalidArgument("the first message must have text (\" \" to begin)", "text",
                                 "missing_field");
  }
  if (contexts_.size() >= kMaxOpenContexts) {
    return core::InvalidArgument(
        "too many open contexts on this socket (at most " + std::to_string(kMaxOpenContexts) + ")",
        "context_id", "too_many_contexts");
  }
  auto context =
      std::make_unique<Context>(*this, multi_ ? message.context_id : std::optional<std::string>());
  service::SessionOptions options;
  options.request = request_;
  options.request.allowed_models = env_.caller.auth.allowed_models;
  if (message.speed) options.request.speed = *message.speed;
  options.request.dictionaries = message.dictionaries;
  options.request.context.request_id =
      env_.caller.request_id + (multi_ ? "/" + key : std::string());
  // Completions run on the strand; reading resumes after each, as a sentence may have started.
  service::SessionPost post = [this](absl::AnyInvocable<void() &&> task) {
    env_.output.Post([this, task = std::move(task)]() mutable {
      std::move(task)();
      Advance();
    });
  };
  auto session = service::SpeechSession::Create(env_.service, std::move(options), *context,
                                                std::move(post), env_.keep_alive);
  if (!session.ok()) return session.status();
  context->session = *std::move(session);
  ++contexts_started_;
  return contexts_.emplace(std::move(key), std::move(context)).first->second.get();
}

absl::Status InputStream::Take(const InputMessage& message) {
  if (multi_ && message.close_socket) {
    // "Any context that was previously set to flush will wait to flush before closing" (the
    // SDK's CloseSocket): each open context is closed as by close_context, then the socket.
    closing_socket_ = true;
    for (auto& [key, context] : contexts_) {
      if (context->closed) continue;
      if (absl::Status status = CloseContext(*context); !status.ok()) return status;
    }
    CloseWhenDone();
    return absl::OkStatus();
  }
  if (multi_ && !message.context_id) {
    return core::InvalidArgument("context_id is required on multi-stream-input", "context_id",
                                 "missing_field");
  }
  if (multi_ && message.close_context && !contexts_.contains(*message.context_id)) {
    return absl::OkStatus();  // nothing open by that id (closed already, or never used)
  }
  absl::StatusOr<Context*> found = ContextFor(message);
  if (!found.ok()) return found.status();
  Context& context = **found;
  if (context.closed) {
    if (!multi_) {
      return core::InvalidArgument("no message may follow the end of input ({\"text\": \"\"})", {},
                                   "message_after_close");
    }
    return core::InvalidArgument("context " + *message.context_id + " is closed", "context_id",
                                 "context_closed");
  }
  Step step;
  if (message.text && !message.text->empty() && !(Blank(*message.text) && !context.had_text)) {
    step.text = *message.text;
    context.had_text = true;
    context.flushed = false;
  }
  if (message.flush) {
    step.flush = true;
    context.flushed = true;
  }
  // stream-input: "" (or close_socket) ends the input; multi-stream-input: "" only keeps alive.
  step.end = multi_ ? message.close_context
                    : (message.text && message.text->empty()) || message.close_socket;
  if (step.end && multi_) {
    if (!step.text.empty() || step.flush) {
      step.end = false;
      pending_bytes_ += step.text.size();
      context.pending.push_back(std::move(step));
    }
    return CloseContext(context);
  }
  if (step.end) {
    context.closed = true;
    closing_socket_ = true;
  }
  pending_bytes_ += step.text.size();
  context.pending.push_back(std::move(step));
  return Feed(context);
}

// "If it has already been set to flush it will continue flushing" (the SDK's CloseContext, from
// ElevenLabs' API definition): after a flush (LiveKit's end of an utterance) the flushed text is
// spoken, then isFinal; in the middle of an utterance (barge-in) the context's audio stops now,
// even while its text waits for room (Feed), so a client can always interrupt.
absl::Status InputStream::CloseContext(Context& context) {
  context.closed = true;
  if (context.flushed) {
    context.pending.push_back({{}, false, true});
    return Feed(context);
  }
  context.stopped = true;
  pending_bytes_ -= context.PendingBytes();
  context.pending.clear();
  context.session->Abort(absl::CancelledError("the context was closed"));
  return absl::OkStatus();
}

// A context's steps go to its session while its waiting queue has room. The socket is still
// read meanwhile (close_context must get through); UpdateReading bounds what waits here.
absl::Status InputStream::Feed(Context& context) {
  service::SpeechSession& session = *context.session;
  while (!context.pending.empty() && session.TakesText() && !session.Backlogged()) {
    Step step = std::move(context.pending.front());
    context.pending.pop_front();
    pending_bytes_ -= step.text.size();
    if (!step.text.empty()) {
      if (absl::Status status = session.AddText(step.text); !status.ok()) return status;
    }
    if (step.flush) {
      if (absl::Status status = session.Flush(); !status.ok()) return status;
    }
    if (step.end) return session.End();
  }
  return absl::OkStatus();
}

void InputStream::Advance() {
  for (auto& [key, context] : contexts_) {
    if (absl::Status status = Feed(*context); !status.ok()) return Fail(status, context->id);
  }
  UpdateReading();
}

void InputStream::OnContextEnded(Context& context, const service::SessionEnd& end) {
  context.ended = true;
  if (ended_ || closing_) return;
  if (end.status.ok() || context.stopped) {
    env_.metrics.CountMessage("out", "final");
    env_.output.SendEvent(FinalMessage(context.id));
  } else if (core::DetailOf(end.status).reason == core::ErrorReason::kDraining) {
    // Drain: CloseWhenDone closes with 1001 once every context has ended.
  } else if (!multi_) {
    return Fail(end.status);
  } else {
    // One context failed (e.g. an unknown model for its voice): the others go on.
    env_.metrics.CountMessage("out", "error");
    env_.output.SendEvent(ErrorMessage(
        end.status, static_cast<int>(websocket::CloseCodeFor(end.status)), context.id));
  }
  // Removed once its session's call is over (this runs inside it).
  const std::string key = context.id.value_or("");
  env_.output.Post([this, key, gone = &context] {
    auto it = contexts_.find(key);
    if (it != contexts_.end() && it->second.get() == gone) {
      pending_bytes_ -= gone->PendingBytes();
      contexts_.erase(it);
    }
    CloseWhenDone();
  });
}

void InputStream::CloseWhenDone() {
  if (!closing_socket_ || closing_ || ended_) return;
  for (const auto& [key, context] : contexts_) {
    if (!context->ended) return;
  }
  CloseWith(log_status_ == 503 ? CloseCode::kGoingAway : CloseCode::kNormal, "done");
}

// Audio messages count in the connection's QueuedAudioBytes until written: a sentence pauses
// while a slow reader holds more than stream_buffer_bytes, and goes on from here.
void InputStream::OnAudioWritten() {
  for (auto& [key, context] : contexts_) context->session->ResumeAudio();
}

bool InputStream::Busy() const {
  for (const auto& [key, context] : contexts_) {
    if (context->session->Busy()) return true;
  }
  return false;
}

void InputStream::OnBinaryMessage() {
  env_.metrics.CountMessage("in", "binary");
  if (ended_ || closing_) return;
  Fail(core::InvalidArgument("messages must be JSON text", {}, "binary_message"));
}

void InputStream::OnIdleTimeout() {
  if (ended_ || closing_ || Busy()) return;
  log_status_ = 408;
  const absl::Status status = core::InvalidArgument(
      "no message for too long (websocket.idle_timeout_ms)", {}, "input_timeout_exceeded");
  env_.output.SendEvent(ErrorMessage(status, static_cast<int>(CloseCode::kPolicy), {}));
  CloseWith(CloseCode::kPolicy, "idle timeout: no message for too long");
}

void InputStream::Drain() {
  if (ended_ || closing_) return;
  closing_socket_ = true;
  log_status_ = 503;
  for (auto& [key, context] : contexts_) context->session->Drain();
  CloseWhenDone();
}

void InputStream::OnConnectionEnded(websocket::ConnectionEnd end,
                                    std::optional<int> client_close_code) {
  if (ended_) return;
  ended_ = true;
  if (!closing_) {
    if (end == websocket::ConnectionEnd::kHandshakeFailed) log_status_ = 400;
    if (end == websocket::ConnectionEnd::kTooBig) log_status_ = 413;
    if (end == websocket::ConnectionEnd::kByClient && Busy()) log_status_ = 499;
    close_code_ = client_close_code;
  }
  for (auto& [key, context] : contexts_) {
    context->session->Abort(absl::CancelledError("the client went away"));
  }
}

void InputStream::UpdateReading() {
  env_.output.SetReading(!ended_ && !closing_ && pending_bytes_ < kMaxPendingBytes);
}

void InputStream::Fail(const absl::Status& status, const std::optional<std::string>& context_id) {
  if (ended_ || closing_) return;
  log_status_ = http::HttpStatusFor(status);
  const CloseCode code = websocket::CloseCodeFor(status);
  env_.metrics.CountMessage("out", "error");
  env_.output.SendEvent(ErrorMessage(status, static_cast<int>(code), context_id));
  CloseWith(code, std::string(status.message()));
}

void InputStream::CloseWith(CloseCode code, std::string_view reason) {
  closing_ = true;
  close_code_ = static_cast<int>(code);
  env_.output.Close(code, std::string(reason));
  if (code == CloseCode::kNormal) return;
  for (auto& [key, context] : contexts_) {
    context->session->Abort(absl::CancelledError("the stream is closing"));
  }
}

void InputStream::WriteLog() {
  if (logged_) return;
  logged_ = true;
  env_.caller.admission.Reset();
  core::RequestLogEntry entry;
  entry.request_id = env_.caller.request_id;
  entry.transport = "websocket";
  entry.method = "GET";
  entry.route = kRoute;
  entry.status = log_status_;
  entry.key = env_.caller.auth.key_name;
  entry.client_subject = env_.caller.auth.client_subject;
  entry.remote = env_.caller.remote;
  entry.close_code = close_code_;
  entry.voice = voice_id_;
  entry.chars = chars_;
  entry.audio_seconds = audio_seconds_;
  entry.total_seconds =
      std::chrono::duration<double>(core::Clock::now() - env_.caller.started_at).count();
  core::LogRequest(entry);
}

}  // namespace voxserve::transport::elevenlabs
