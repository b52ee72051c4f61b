// TEST ONLY: makes this server misbehave on purpose, so that clients' retries, circuit breakers,
// failover and timeouts can be tested against the real binary. Off unless the server runs with
// --fault-injection true (YAML testing.fault_injection), which it logs as a warning.
//
// When on, every route is wrapped, and an admin route steers the faults:
//   POST /testing/faults {"fail_next": 3, "status": 503, "retry_after": 1,   // answer errors
//                         "delay_next": 1, "delay_ms": 2000,                 // answer late
//                         "drop_next": 1,                                    // close, no answer
//                         "abort_next": 1,            // cut a stream off after its first chunk
//                         "path": "/v1/audio/speech"} // only this route (default: all but
//                                                     // /testing/* and /health*)
//   DELETE /testing/faults   clears every pending fault
//   GET /testing/faults      counters: requests seen, faults injected, faults pending
// A POST replaces the pending faults. Per request: drop, else fail (after the delay, if one is
// pending), else delay, else abort, else pass through.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "transport/http/router.h"

namespace voxserve::transport::http {

// Safe cross thread. Owns one thread that runs delay timers; must outlive the server's I/O.
class FaultInjector {
 public:
  FaultInjector();
  ~FaultInjector();

  // Wraps every route added to `router` so far, then adds /testing/faults.
  void Install(Router& router);

 private:
  struct Plan {
    int fail_next = 0;
    int status = 503;
    int retry_after = -1;  // seconds; < 0: no Retry-After header
    int delay_next = 0;
    int delay_ms = 0;
    int drop_next = 0;
    int abort_next = 0;
    std::string path;
  };
  struct Counters {
    int requests = 0, failed = 0, delayed = 0, dropped = 0, aborted = 0;
  };
  enum class Action { kPass, kFail, kDrop, kAbort };

  void Handle(const std::string& path, const Handler& inner,
              const std::shared_ptr<HttpExchange>& exchange);
  void Configure(const std::shared_ptr<HttpExchange>& exchange);
  void Report(const std::shared_ptr<HttpExchange>& exchange);
  // `status` and `retry_after` (seconds, < 0: none) for kFail.
  void Act(Action action, int status, int retry_after, const Handler& inner,
           const std::shared_ptr<HttpExchange>& exchange);

  std::mutex mutex_;
  Plan plan_;
  Counters counters_;
  boost::asio::io_context timers_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::thread thread_;
};

}  // namespace voxserve::transport::http
