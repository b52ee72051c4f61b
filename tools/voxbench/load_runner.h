// Drives load through one shared Client: closed loop (N workers, each sending its next request
// as soon as the last one ends) or open loop (Poisson arrivals at a rate, whatever the server
// does). Only requests that complete inside the measured window (after the warm-up) count.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "bench_stats.h"
#include "client/client.h"

namespace voxserve::voxbench {

enum class CallKind {
  kSpeech,      // synthesis: REST (whole file, --stream chunked, SSE), gRPC or WebSocket
  kHealthLive,  // GET /health/live: what the client and the HTTP layer can do without synthesis
};

struct LoadSettings {
  CallKind call = CallKind::kSpeech;
  client::SpeechRequest request;  // voice, model, format, stream; input drawn from `texts`
  std::vector<std::string> texts;
  std::chrono::duration<double> warmup{2.0};
  std::chrono::duration<double> duration{10.0};
  uint64_t seed = 1;
  int max_in_flight = 1024;  // open loop: worker threads; arrivals beyond wait (and that counts)
};

std::vector<Sample> RunClosedLoop(client::Client& client, const LoadSettings& settings,
                                  int concurrency);
// `rate`: mean arrivals per second. Latency is measured from each request's scheduled arrival,
// so a client falling behind shows as latency instead of hiding it (coordinated omission).
std::vector<Sample> RunOpenLoop(client::Client& client, const LoadSettings& settings, double rate);

// One request, timed from `intended_start`.
Sample RunOne(client::Client& client, const LoadSettings& settings, const std::string& text,
              std::chrono::steady_clock::time_point intended_start);

}  // namespace voxserve::voxbench
