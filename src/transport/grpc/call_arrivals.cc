#include "transport/grpc/call_arrivals.h"

#include <algorithm>
#include <string_view>
#include <thread>

namespace voxserve::transport::grpc {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view kHealthPrefix = "/grpc.health.v1.Health/";

class ArrivalRecorder final : public ::grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit ArrivalRecorder(CallArrivals& arrivals) : arrivals_(arrivals) {}
  ::grpc::experimental::Interceptor* CreateServerInterceptor(
      ::grpc::experimental::ServerRpcInfo* info) override {
    // Health probes do not hold a drain: a prober that polls often would otherwise keep it
    // waiting to the deadline, and a probe cancelled by the shutdown is only a failed probe.
    if (!std::string_view(info->method()).starts_with(kHealthPrefix)) arrivals_.Arrived();
    return nullptr;  // nothing to intercept: the call goes on as it came
  }

 private:
  CallArrivals& arrivals_;
};

}  // namespace

CallArrivals::CallArrivals() : last_(Clock::now().time_since_epoch().count()) {}

void CallArrivals::Arrived() {
  last_.store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed);
}

void CallArrivals::WaitQuiet(std::chrono::milliseconds quiet, Clock::time_point deadline) const {
  for (;;) {
    const Clock::time_point last{Clock::duration(last_.load(std::memory_order_relaxed))};
    const Clock::time_point until = std::min(last + quiet, deadline);
    if (Clock::now() >= until) return;
    // An arrival meanwhile moves `until` later; the loop then sleeps again.
    std::this_thread::sleep_until(until);
  }
}

std::unique_ptr<::grpc::experimental::ServerInterceptorFactoryInterface> CallArrivals::Recorder(
    CallArrivals& arrivals) {
  return std::make_unique<ArrivalRecorder>(arrivals);
}

}  // namespace voxserve::transport::grpc
