// How a voxserve Client connects, retries and protects itself: endpoints, TLS, API key, timeouts,
// retry policy, circuit breaker and connection pool sizes. Plain values; validated by
// Client::Create.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace voxserve::client {

using Millis = std::chrono::milliseconds;

struct TlsOptions {
  std::string ca_file;    // PEM bundle the server's certificate must chain to; empty: system store
  std::string cert_file;  // PEM client certificate chain (mTLS); set with key_file
  std::string key_file;   // PEM private key of cert_file
  std::string server_name;  // SNI and the name verified; empty: the endpoint's host
  bool verify_peer = true;  // false accepts any certificate: tests against self-signed servers only
};

// Exponential backoff with full jitter (AWS architecture blog, "Exponential Backoff and Jitter"):
// before retry n (1, 2, ...) the client sleeps uniform[0, min(max_backoff, initial *
// multiplier^(n-1))].
struct RetryPolicy {
  int max_attempts = 3;  // attempts in all; 1 = never retry
  Millis initial_backoff{100};
  Millis max_backoff{2000};
  double multiplier = 2.0;
  bool jitter = true;  // false: sleep exactly the backoff (deterministic, for tests)
  // A server's Retry-After replaces the backoff when longer. One longer than this (or than the
  // time left before total_timeout) ends the call at once with the server's error.
  Millis max_retry_after{30000};
};

// Per endpoint: closed → open when, over the last `window`, at least `min_calls` calls ended and
// `failure_rate` of them failed (connect errors, timeouts, broken connections, HTTP 5xx; a 4xx or
// 429 is an answer from a healthy server). Open: calls fail fast for `open_for`, then half-open
// lets `half_open_probes` calls through; all succeed → closed, one fails → open again.
struct CircuitBreakerOptions {
  bool enabled = true;
  Millis window{10000};
  int min_calls = 10;
  double failure_rate = 0.5;
  Millis open_for{5000};
  int half_open_probes = 1;
};

enum class Failover {
  kRoundRobin,  // spread calls over the endpoints; a retry moves to the next one
  kInOrder,     // the first endpoint whose breaker is closed takes the call; the rest are backups
};

struct ClientOptions {
  // "http://host:port" or "https://host:port" (REST), "grpc://" or "grpcs://" (gRPC), "ws://" or
  // "wss://" (WebSocket speech stream; its catalog and health calls go over REST to the same
  // host). A path prefix is kept ("http://h/tts" → "/tts/v1/...").
  std::vector<std::string> endpoints;
  std::string api_key;  // sent as "Authorization: Bearer <key>"; empty: none
  TlsOptions tls;       // for https://, grpcs:// and wss:// endpoints

  Millis connect_timeout{2000};   // TCP connect + TLS handshake of one new connection
  Millis attempt_timeout{30000};  // one attempt, from taking a connection to the last byte
  Millis total_timeout{60000};    // the whole call: every attempt and every backoff sleep
  RetryPolicy retry;
  CircuitBreakerOptions breaker;
  Failover failover = Failover::kRoundRobin;

  // Keep-alive pool per endpoint: at most this many connections open at once (further calls wait
  // for one, within their attempt timeout) ...
  size_t max_connections_per_endpoint = 64;
  // ... and idle connections older than this are closed rather than reused (below the server's
  // http.idle_timeout_ms of 60 s, so the client, not the server, closes first).
  Millis idle_timeout{50000};
  std::string user_agent = "voxclient/0.1";
};

}  // namespace voxserve::client
