// Circuit breaker, failover, timeouts and sharing one client between threads, against real
// voxserve processes with injected faults.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "client_test_support.h"

namespace voxserve::client {
namespace {

using ResilienceTest = FaultServerTest;

ClientOptions BreakerOptions(std::vector<std::string> endpoints) {
  ClientOptions options = TestOptions(std::move(endpoints));
  options.retry.max_attempts = 1;
  options.breaker.enabled = true;
  options.breaker.min_calls = 4;
  options.breaker.failure_rate = 0.5;
  options.breaker.open_for = milliseconds(400);
  return options;
}

TEST_F(ResilienceTest, BreakerOpensFailsFastHalfOpensAndCloses) {
  server_->SetFaults(R"({"fail_next": 100, "status": 503})");
  auto client = MakeClient(BreakerOptions({server_->url()}));
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(client->Synthesize(Hello()).ok());
  EXPECT_EQ(client->breaker_state(0), BreakerState::kOpen);

  // Open: fails at once and sends nothing.
  int seen = RequestsSinceSetUp();
  Clock::time_point start = Clock::now();
  auto fast = client->Synthesize(Hello());
  EXPECT_LT(MillisBetween(start, Clock::now()), 50);
  EXPECT_EQ(ErrorInfoOf(fast.status()).kind, ErrorKind::kCircuitOpen) << fast.status();
  EXPECT_EQ(fast.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(RequestsSinceSetUp(), seen);

  // After open_for: half-open; a failing probe opens it again.
  std::this_thread::sleep_for(milliseconds(450));
  EXPECT_EQ(client->breaker_state(0), BreakerState::kHalfOpen);
  EXPECT_EQ(ErrorInfoOf(client->Synthesize(Hello()).status()).http_status, 503);
  EXPECT_EQ(client->breaker_state(0), BreakerState::kOpen);

  // The server recovers; the next probe succeeds and closes the breaker.
  server_->Request("DELETE", "/testing/faults");
  std::this_thread::sleep_for(milliseconds(450));
  EXPECT_EQ(client->breaker_state(0), BreakerState::kHalfOpen);
  auto probe = client->Synthesize(Hello());
  EXPECT_TRUE(probe.ok()) << probe.status();
  EXPECT_EQ(client->breaker_state(0), BreakerState::kClosed);
}

TEST_F(ResilienceTest, ClientErrorsDoNotOpenTheBreaker) {
  auto client = MakeClient(BreakerOptions({server_->url()}));
  SpeechRequest bad = Hello();
  bad.voice = "no-such-voice";
  for (int i = 0; i < 6; ++i) EXPECT_FALSE(client->Synthesize(bad).ok());
  EXPECT_EQ(client->breaker_state(0), BreakerState::kClosed);
}

TEST_F(ResilienceTest, FailsOverToTheHealthyEndpoint) {
  testing::VoxServeProcess healthy({});
  ASSERT_TRUE(healthy.started()) << healthy.log();
  // Fault injection is off unless asked for: no admin route, no warning.
  EXPECT_EQ(healthy.Request("POST", "/testing/faults", R"({"fail_next": 1})"), 404);
  EXPECT_EQ(healthy.log().find("FAULT INJECTION"), std::string::npos);
  server_->SetFaults(R"({"fail_next": 100, "status": 503})");
  ClientOptions options = BreakerOptions({server_->url(), healthy.url()});
  options.retry.max_attempts = 2;
  options.failover = Failover::kInOrder;
  // Open for the whole test: with 400 ms, a slow run (ASan beside other tests) saw the breaker
  // half-open again before the call that checks it goes straight to the healthy endpoint.
  options.breaker.open_for = std::chrono::minutes(10);
  auto client = MakeClient(options);

  CallInfo first;
  auto result = client->Synthesize(Hello(), &first);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(first.attempts.size(), 2u);
  EXPECT_EQ(first.attempts[0].endpoint, server_->url());
  EXPECT_EQ(first.attempts[0].http_status, 503);
  EXPECT_EQ(first.attempts[1].endpoint, healthy.url());

  // Once the failing endpoint's breaker opens, calls go straight to the healthy one.
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(client->Synthesize(Hello()).ok());
  EXPECT_EQ(client->breaker_state(0), BreakerState::kOpen);
  CallInfo later;
  ASSERT_TRUE(client->Synthesize(Hello(), &later).ok());
  ASSERT_EQ(later.attempts.size(), 1u);
  EXPECT_EQ(later.attempts[0].endpoint, healthy.url());
}

TEST_F(ResilienceTest, FailsOverPastAnEndpointThatRefusesConnections) {
  // A port that was just free: nothing listens there.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  socklen_t length = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  std::string dead = "http://127.0.0.1:" + std::to_string(ntohs(address.sin_port));

  ClientOptions options = TestOptions({dead, server_->url()});
  options.failover = Failover::kInOrder;
  auto client = MakeClient(options);
  CallInfo info;
  auto result = client->Synthesize(Hello(), &info);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(info.attempts.size(), 2u);
  EXPECT_EQ(ErrorInfoOf(info.attempts[0].status).kind, ErrorKind::kConnect);
  EXPECT_EQ(info.attempts[1].endpoint, server_->url());
}

TEST_F(ResilienceTest, AttemptTimeoutFiresOnTimeAndIsNotRetried) {
  server_->SetFaults(R"({"delay_next": 1, "delay_ms": 3000})");
  ClientOptions options = TestOptions({server_->url()});
  options.attempt_timeout = milliseconds(300);
  auto client = MakeClient(options);
  Clock::time_point start = Clock::now();
  CallInfo info;
  auto result = client->Synthesize(Hello(), &info);
  double elapsed = MillisBetween(start, Clock::now());

  EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded) << result.status();
  EXPECT_EQ(ErrorInfoOf(result.status()).kind, ErrorKind::kTimeout);
  EXPECT_EQ(info.attempts.size(), 1u);
  EXPECT_GE(elapsed, 300);
  EXPECT_LT(elapsed, 550);
}

TEST_F(ResilienceTest, TotalTimeoutBoundsRetriesAndBackoff) {
  server_->SetFaults(R"({"fail_next": 100, "status": 503})");
  ClientOptions options = TestOptions({server_->url()});
  options.retry.max_attempts = 100;
  options.retry.multiplier = 1.0;  // 100 ms between attempts
  options.total_timeout = milliseconds(450);
  auto client = MakeClient(options);
  Clock::time_point start = Clock::now();
  CallInfo info;
  auto result = client->Synthesize(Hello(), &info);
  double elapsed = MillisBetween(start, Clock::now());

  // Where the deadline falls decides the error: in a backoff sleep the call ends at once with the
  // server's last 503; during an attempt (a slow one: the TSan build's) that attempt is cut, a
  // timeout marked as the total one. Either way it ends on time.
  if (result.status().code() == absl::StatusCode::kDeadlineExceeded) {
    EXPECT_NE(result.status().message().find("(total timeout)"), std::string_view::npos)
        << result.status();
  } else {
    EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable) << result.status();
  }
  EXPECT_LE(elapsed, 450 + 100);
  EXPECT_GE(info.attempts.size(), 3u);
  EXPECT_LE(info.attempts.size(), 5u);
}

TEST_F(ResilienceTest, ConnectTimeoutFiresOnTime) {
  // A listener that never accepts, its backlog filled: further SYNs are dropped, so a connect
  // hangs until the client gives up.
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(listen(listener, 0), 0);
  socklen_t length = sizeof address;
  getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  std::vector<int> fillers;
  for (int i = 0; i < 4; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
    fillers.push_back(fd);
  }
  std::this_thread::sleep_for(milliseconds(50));

  ClientOptions options =
      TestOptions({"http://127.0.0.1:" + std::to_string(ntohs(address.sin_port))});
  options.connect_timeout = milliseconds(300);
  options.retry.max_attempts = 1;
  auto client = MakeClient(options);
  Clock::time_point start = Clock::now();
  auto result = client->Synthesize(Hello());
  double elapsed = MillisBetween(start, Clock::now());
  for (int fd : fillers) close(fd);
  close(listener);

  EXPECT_EQ(ErrorInfoOf(result.status()).kind, ErrorKind::kConnect) << result.status();
  EXPECT_GE(elapsed, 300);
  EXPECT_LT(elapsed, 550);
}

TEST_F(ResilienceTest, EightThreadsShareOneClientWithoutErrors) {
  ClientOptions options = TestOptions({server_->url()});
  options.max_connections_per_endpoint = 4;  // fewer than threads: callers wait for connections
  auto client = MakeClient(options);
  std::atomic<int> failures{0};
  std::atomic<int> calls{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 6; ++i) {
        absl::Status status;
        if ((t + i) % 3 == 0) {
          status = client->ListVoices().status();
        } else if ((t + i) % 3 == 1) {
          status = client->SynthesizeStream(Hello(), [](std::string_view) {}).status();
        } else {
          status = client->Synthesize(Hello("wav")).status();
        }
        ++calls;
        if (!status.ok()) {
          ++failures;
          ADD_FAILURE() << status;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(calls.load(), 48);
  EXPECT_EQ(failures.load(), 0);
}

TEST(KeepAliveTest, ReplacesAConnectionTheServerClosedWhileIdle) {
  testing::VoxServeProcess server({"--idle-timeout-ms", "200"});
  ASSERT_TRUE(server.started()) << server.log();
  ClientOptions options = TestOptions({server.url()});
  options.retry.max_attempts = 1;  // the replacement must not need a retry
  auto client = MakeClient(options);
  ASSERT_TRUE(client->ListModels().ok());
  std::this_thread::sleep_for(milliseconds(400));  // the server closes the idle connection
  CallInfo info;
  auto again = client->ListModels(&info);
  EXPECT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(info.attempts.size(), 1u);
}

}  // namespace
}  // namespace voxserve::client
