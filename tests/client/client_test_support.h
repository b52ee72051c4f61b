// Shared by the client's integration tests: a voxserve with fault injection for the whole suite,
// options that make retries deterministic, and elapsed-time helpers.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "client/client.h"
#include "voxserve_process.h"

namespace voxserve::client {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

inline double MillisBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// Deterministic retries (no jitter) and no breaker unless a test turns it on.
inline ClientOptions TestOptions(std::vector<std::string> endpoints) {
  ClientOptions options;
  options.endpoints = std::move(endpoints);
  options.retry.jitter = false;
  options.retry.initial_backoff = milliseconds(100);
  options.retry.max_backoff = milliseconds(1000);
  options.retry.max_attempts = 4;
  options.breaker.enabled = false;
  options.attempt_timeout = milliseconds(10000);
  options.total_timeout = milliseconds(20000);
  return options;
}

inline std::unique_ptr<Client> MakeClient(const ClientOptions& options) {
  auto client = Client::Create(options);
  EXPECT_TRUE(client.ok()) << client.status();
  return client.ok() ? std::move(*client) : nullptr;
}

inline SpeechRequest Hello(std::string format = "pcm") {
  SpeechRequest request;
  request.input = "Hello there.";
  request.voice = "alloy";
  request.response_format = std::move(format);
  return request;
}

// One voxserve with --fault-injection for every test of a suite; faults cleared before each test.
class FaultServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new testing::VoxServeProcess({"--fault-injection", "true"});
    ASSERT_TRUE(server_->started()) << server_->log();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(server_, nullptr);
    server_->Request("DELETE", "/testing/faults");
    seen_before_ = server_->FaultRequestsSeen();
  }
  int RequestsSinceSetUp() const { return server_->FaultRequestsSeen() - seen_before_; }

  static testing::VoxServeProcess* server_;
  int seen_before_ = 0;
};

}  // namespace voxserve::client
