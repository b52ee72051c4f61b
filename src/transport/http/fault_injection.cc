#include "transport/http/fault_injection.h"

#include <boost/asio/steady_timer.hpp>

#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"

namespace voxserve::transport::http {
namespace {

using nlohmann::json;

// Lets exactly one chunk of a stream reach the client, then breaks the connection off: the
// client has seen audio, then the connection dies. The first non-empty chunk passes; every later
// write and the end are swallowed (so a fast response cannot queue its end and arrive whole), and
// the socket is closed once that chunk has been written (the inner exchange's drain of it; the
// route's own drain callback is called from there too). Aborting at the second write instead
// could close the socket while the first chunk still sat in the session's queue: the client saw
// no audio and rightly retried.
class AbortingExchange final : public HttpExchange,
                               public std::enable_shared_from_this<AbortingExchange> {
 public:
  explicit AbortingExchange(std::shared_ptr<HttpExchange> inner) : inner_(std::move(inner)) {}
  void Arm() {
    inner_->OnDrained([self = shared_from_this()] {
      std::function<void()> route_callback;
      {
        std::lock_guard lock(self->mutex_);
        route_callback = self->on_drained_;
      }
      if (route_callback) route_callback();
      self->inner_->AbortStream();  // only the one chunk ever reached the inner exchange
    });
  }
  const HttpRequest& request() const override { return inner_->request(); }
  const std::string& request_id() const override { return inner_->request_id(); }
  const auth::AuthResult& auth() const override { return inner_->auth(); }
  void Respond(HttpResponse response) override { inner_->Respond(std::move(response)); }
  void StartStream(HttpResponse head) override { inner_->StartStream(std::move(head)); }
  void WriteStream(std::string bytes) override {
    if (bytes.empty()) return;  // the session drops empty chunks: no drain would follow
    {
      std::lock_guard lock(mutex_);
      if (chunk_passed_) return;
      chunk_passed_ = true;
    }
    inner_->WriteStream(std::move(bytes));
  }
  void EndStream() override {
    std::lock_guard lock(mutex_);
    if (!chunk_passed_) inner_->EndStream();  // nothing to cut: an empty stream ends normally
  }
  void AbortStream() override { inner_->AbortStream(); }
  size_t BufferedBytes() const override { return inner_->BufferedBytes(); }
  void OnDrained(std::function<void()> callback) override {
    std::lock_guard lock(mutex_);
    on_drained_ = std::move(callback);
  }
  void OnClientGone(std::function<void()> callback) override {
    inner_->OnClientGone(std::move(callback));
  }
  void AnnotateLog(std::function<void(core::RequestLogEntry&)> annotate) override {
    inner_->AnnotateLog(std::move(annotate));
  }

 private:
  const std::shared_ptr<HttpExchange> inner_;
  std::mutex mutex_;
  bool chunk_passed_ = false;
  std::function<void()> on_drained_;
};

void RunRoute(const Handler& inner, const std::shared_ptr<HttpExchange>& exchange) {
  try {
    inner(exchange);
  } catch (const std::exception& error) {
    exchange->Respond(JsonResponse(500, json{{"error", {{"message", error.what()}}}}.dump()));
  }
}

bool Exempt(const std::string& path) {
  return path.starts_with("/testing/") || path.starts_with("/health");
}

}  // namespace

FaultInjector::FaultInjector()
    : work_(boost::asio::make_work_guard(timers_)), thread_([this] { timers_.run(); }) {}

FaultInjector::~FaultInjector() {
  work_.reset();
  timers_.stop();
  if (thread_.joinable()) thread_.join();
}

void FaultInjector::Install(Router& router) {
  router.WrapAll([this](const std::string& path, Handler inner) -> Handler {
    return [this, path, inner = std::move(inner)](std::shared_ptr<HttpExchange> exchange) {
      Handle(path, inner, exchange);
    };
  });
  router.Add("POST", "/testing/faults",
             [this](std::shared_ptr<HttpExchange> exchange) { Configure(exchange); });
  router.Add("DELETE", "/testing/faults", [this](std::shared_ptr<HttpExchange> exchange) {
    {
      std::lock_guard lock(mutex_);
      plan_ = Plan{};
    }
    Report(exchange);
  });
  router.Add("GET", "/testing/faults",
             [this](std::shared_ptr<HttpExchange> exchange) { Report(exchange); });
  spdlog::warn(
      "FAULT INJECTION IS ON (testing only): POST /testing/faults makes this server fail, delay "
      "and drop requests on purpose. Never run a production server with --fault-injection.");
}

void FaultInjector::Configure(const std::shared_ptr<HttpExchange>& exchange) {
  json body = json::parse(exchange->request().body, nullptr, false);
  if (!body.is_object()) {
    return exchange->Respond(JsonResponse(
        400,
        json{{"error", {{"message", "expected a JSON object"}, {"type", "invalid_request_error"}}}}
            .dump()));
  }
  Plan plan;
  auto number = [&body](const char* key, int fallback) {
    return body.contains(key) && body[key].is_number_integer() ? body[key].get<int>() : fallback;
  };
  plan.fail_next = number("fail_next", 0);
  plan.status = number("status", 503);
  plan.retry_after = number("retry_after", -1);
  plan.delay_next = number("delay_next", 0);
  plan.delay_ms = number("delay_ms", 0);
  plan.drop_next = number("drop_next", 0);
  plan.abort_next = number("abort_next", 0);
  if (body.contains("path") && body["path"].is_string()) plan.path = body["path"];
  {
    std::lock_guard lock(mutex_);
    plan_ = plan;
  }
  spdlog::warn("fault injection: {}", body.dump());
  Report(exchange);
}

void FaultInjector::Report(const std::shared_ptr<HttpExchange>& exchange) {
  std::lock_guard lock(mutex_);
  json report = {{"requests", counters_.requests},
                 {"failed", counters_.failed},
                 {"delayed", counters_.delayed},
                 {"dropped", counters_.dropped},
                 {"aborted", counters_.aborted},
                 {"pending",
                  {{"fail_next", plan_.fail_next},
                   {"delay_next", plan_.delay_next},
                   {"drop_next", plan_.drop_next},
                   {"abort_next", plan_.abort_next}}}};
  exchange->Respond(JsonResponse(200, report.dump()));
}

void FaultInjector::Handle(const std::string& path, const Handler& inner,
                           const std::shared_ptr<HttpExchange>& exchange) {
  Action action = Action::kPass;
  int delay_ms = 0;
  int status = 0;
  int retry_after = -1;
  {
    std::lock_guard lock(mutex_);
    bool applies = plan_.path.empty() ? !Exempt(path) : plan_.path == path;
    if (!applies) return RunRoute(inner, exchange);
    ++counters_.requests;
    if (plan_.drop_next > 0) {
      --plan_.drop_next;
      ++counters_.dropped;
      action = Action::kDrop;
    } else if (plan_.fail_next > 0) {
      --plan_.fail_next;
      ++counters_.failed;
      action = Action::kFail;
      status = plan_.status;
      retry_after = plan_.retry_after;
    } else if (plan_.abort_next > 0) {
      --plan_.abort_next;
      ++counters_.aborted;
      action = Action::kAbort;
    }
    if (action != Action::kDrop && plan_.delay_next > 0) {
      --plan_.delay_next;
      ++counters_.delayed;
      delay_ms = plan_.delay_ms;
    }
  }
  if (delay_ms <= 0) return Act(action, status, retry_after, inner, exchange);
  auto timer =
      std::make_shared<boost::asio::steady_timer>(timers_, std::chrono::milliseconds(delay_ms));
  timer->async_wait(
      [this, timer, action, status, retry_after, inner, exchange](boost::system::error_code ec) {
        if (!ec) Act(action, status, retry_after, inner, exchange);
      });
}

void FaultInjector::Act(Action action, int status, int retry_after, const Handler& inner,
                        const std::shared_ptr<HttpExchange>& exchange) {
  switch (action) {
    case Action::kPass:
      return RunRoute(inner, exchange);
    case Action::kDrop:
      return exchange->AbortStream();
    case Action::kAbort: {
      auto aborting = std::make_shared<AbortingExchange>(exchange);
      aborting->Arm();
      return RunRoute(inner, aborting);
    }
    case Action::kFail: {
      const char* type = status == 429   ? "rate_limit_error"
                         : status >= 500 ? "server_error"
                                         : "invalid_request_error";
      HttpResponse response =
          JsonResponse(status, json{{"error",
                                     {{"message", "injected fault (--fault-injection)"},
                                      {"type", type},
                                      {"param", nullptr},
                                      {"code", "injected_fault"}}}}
                                   .dump());
      if (retry_after >= 0) response.SetHeader("Retry-After", std::to_string(retry_after));
      return exchange->Respond(std::move(response));
    }
  }
}

}  // namespace voxserve::transport::http
