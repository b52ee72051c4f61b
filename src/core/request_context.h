// What every request carries through the layers: an id for logs and headers, a deadline, and a
// cancellation flag that the transport raises when the client goes away.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

namespace voxserve::core {

using Clock = std::chrono::steady_clock;

// Safe cross thread. Shared by the transport (which cancels) and queued work (which checks).
class CancellationToken {
 public:
  void Cancel() { cancelled_.store(true, std::memory_order_release); }
  bool IsCancelled() const { return cancelled_.load(std::memory_order_acquire); }

 private:
  std::atomic<bool> cancelled_{false};
};

struct RequestContext {
  std::string request_id;
  Clock::time_point received_at = Clock::now();
  Clock::time_point deadline = Clock::time_point::max();
  std::shared_ptr<CancellationToken> cancellation = std::make_shared<CancellationToken>();

  bool Expired(Clock::time_point now = Clock::now()) const { return now >= deadline; }
};

}  // namespace voxserve::core
