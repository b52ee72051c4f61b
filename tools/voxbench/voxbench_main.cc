// voxbench: load generator for voxserve over libvoxclient.
//   voxbench --url http://127.0.0.1:8080 -c 1,4,16,64 -d 10   (corpus: built in, or --corpus FILE)
//            --json out.json --csv out.csv --plot out.png
//   voxbench --rate 5,10,20 -d 20 --protocol sse            (open loop, Poisson arrivals)
//   voxbench --url ws://127.0.0.1:8080 --protocol websocket -c 1,4,16   (speech stream)
//   voxbench --call health -c 16                            (the client's own ceiling)
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <string_view>
#include <thread>

#include "bench_stats.h"
#include "client/client.h"
#include "corpus.h"
#include "default_corpus.h"  // generated: bench/corpus/mixed.txt, compiled in
#include "load_runner.h"
#include "report.h"

namespace {

using namespace voxserve;

std::string NowUtc() {
  std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

// VOXSERVE_URL as voxctl reads it (comma-separated endpoints); --url overrides it.
std::vector<std::string> DefaultUrls() {
  const char* env = std::getenv("VOXSERVE_URL");
  std::vector<std::string> urls;
  for (std::string_view rest = env != nullptr ? env : ""; !rest.empty();) {
    const size_t comma = rest.find(',');
    if (std::string_view url = rest.substr(0, comma); !url.empty()) urls.emplace_back(url);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  if (urls.empty()) urls = {"http://127.0.0.1:8080"};
  return urls;
}

// Exit codes: 0 done (errors counted in the report), 1 a report file could not be written,
// 2 bad arguments, 3 not one request succeeded (the server is down, or refuses everything).
int Run(int argc, char** argv) {
  CLI::App app{"voxbench: closed- and open-loop load for voxserve (REST, SSE, gRPC, WebSocket)",
               "voxbench"};
  app.footer(
      "Environment: VOXSERVE_URL (comma-separated endpoints, as voxctl), VOXSERVE_API_KEY.\n"
      "Exit codes: 0 done, 1 a file could not be written, 2 bad arguments, 3 every request "
      "failed.");
  std::vector<std::string> urls = DefaultUrls();
  client::ClientOptions options;
  if (const char* key = std::getenv("VOXSERVE_API_KEY")) options.api_key = key;
  std::string protocol = "rest", call = "speech", corpus_path, text, json_path, csv_path, plot_path,
              title;
  bool stream = false;
  std::vector<int> concurrency;
  std::vector<double> rates;
  double duration = 10, warmup = 2, timeout = 60;
  int retries = 0;
  voxbench::LoadSettings settings;
  settings.request.response_format = "pcm";  // its size gives the audio length, hence the RTF

  app.add_option("--url", urls, "endpoint(s); several are used round robin (VOXSERVE_URL)")
      ->delimiter(',');
  app.add_option("--api-key", options.api_key, "API key (Authorization: Bearer)");
  app.add_option("--cacert", options.tls.ca_file, "PEM CA bundle for https://");
  app.add_option("--cert", options.tls.cert_file, "PEM client certificate (mTLS)");
  app.add_option("--key", options.tls.key_file, "PEM key of --cert");
  app.add_option("--protocol", protocol,
                 "rest, sse, grpc or websocket (ws): the speech stream, always streamed")
      ->check(CLI::IsMember({"rest", "sse", "grpc", "websocket", "ws"}))
      ->capture_default_str();
  app.add_flag("--stream", stream, "rest: stream_format=audio (chunked); grpc: SynthesizeStream");
  app.add_option("--call", call, "speech, or health (GET /health/live: no synthesis)")
      ->check(CLI::IsMember({"speech", "health"}))
      ->capture_default_str();
  auto* closed = app.add_option("-c,--concurrency", concurrency,
                                "closed loop: clients per point, e.g. 1,4,16,64")
                     ->delimiter(',');
  auto* open = app.add_option("--rate", rates, "open loop: Poisson arrivals/s per point, e.g. 5,10")
                   ->delimiter(',');
  closed->excludes(open);
  app.add_option("-d,--duration", duration, "measured seconds per point")->capture_default_str();
  app.add_option("--warmup", warmup, "seconds of load before each point's window")
      ->capture_default_str();
  app.add_option("--corpus", corpus_path,
                 "texts, one per line (default: bench/corpus/mixed.txt, built in)");
  app.add_option("--text", text, "one text for every request instead of a corpus");
  app.add_option("-v,--voice", settings.request.voice, "voice")->capture_default_str();
  app.add_option("-m,--model", settings.request.model, "model")->capture_default_str();
  app.add_option("-f,--format", settings.request.response_format,
                 "response_format (pcm and wav give the RTF)")
      ->capture_default_str();
  app.add_option("--timeout", timeout, "seconds allowed per request")->capture_default_str();
  app.add_option("--retries", retries, "client retries (0: every error counts)")
      ->capture_default_str();
  app.add_option("--seed", settings.seed, "random seed (texts, arrivals)")->capture_default_str();
  app.add_option("--max-in-flight", settings.max_in_flight, "open loop: most requests at once")
      ->capture_default_str();
  app.add_option("--json", json_path, "write the results as JSON");
  app.add_option("--csv", csv_path, "write the results as CSV");
  app.add_option("--plot", plot_path, "draw throughput and latency to this PNG (gnuplot)");
  app.add_option("--title", title, "title of the plot");
  CLI11_PARSE(app, argc, argv);

  if (protocol == "ws") protocol = "websocket";
  for (const std::string& url : urls) {
    std::string_view scheme = std::string_view(url).substr(0, url.find("://"));
    const bool fits = protocol == "grpc"        ? scheme == "grpc" || scheme == "grpcs"
                      : protocol == "websocket" ? scheme == "ws" || scheme == "wss"
                                                : scheme == "http" || scheme == "https";
    if (!fits) {
      std::cerr << "voxbench: --protocol " << protocol << " does not fit --url " << url
                << " (grpc needs grpc:// or grpcs://, websocket ws:// or wss://, rest and sse "
                   "http(s)://)\n";
      return 2;
    }
  }
  // The speech stream always streams: audio reaches the callback as it arrives.
  if (protocol == "websocket") stream = true;
  if (concurrency.empty() && rates.empty()) concurrency = {1, 4, 16};
  if (!text.empty()) {
    settings.texts = {text};
  } else {
    auto corpus =
        corpus_path.empty()
            ? absl::StatusOr<std::vector<std::string>>(voxbench::ParseCorpus(kDefaultCorpusText))
            : voxbench::LoadCorpus(corpus_path);
    if (!corpus.ok()) {
      std::cerr << "voxbench: " << corpus.status().message() << " (use --corpus or --text)\n";
      return 2;
    }
    settings.texts = std::move(*corpus);
  }
  settings.call = call == "health" ? voxbench::CallKind::kHealthLive : voxbench::CallKind::kSpeech;
  settings.request.stream = protocol == "sse" ? client::StreamFormat::kSse
                            : stream          ? client::StreamFormat::kAudio
                                              : client::StreamFormat::kNone;
  settings.warmup = std::chrono::duration<double>(warmup);
  settings.duration = std::chrono::duration<double>(duration);

  options.endpoints = urls;
  options.attempt_timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout * 1000));
  options.total_timeout = options.attempt_timeout * (retries + 1);
  options.retry.max_attempts = retries + 1;
  options.breaker.enabled = false;  // a benchmark wants to see every error, not fail fast
  int most = 1;
  for (int c : concurrency) most = std::max(most, c);
  options.max_connections_per_endpoint =
      static_cast<size_t>(rates.empty() ? most : settings.max_in_flight);
  auto created = client::Client::Create(options);
  if (!created.ok()) {
    std::cerr << "voxbench: " << created.status().message() << "\n";
    return 2;
  }
  client::Client& client = **created;

  nlohmann::json report = {{"meta",
                            {{"tool", "voxbench"},
                             {"date", NowUtc()},
                             {"urls", urls},
                             {"protocol", protocol},
                             {"stream", stream},
                             {"call", call},
                             {"format", settings.request.response_format},
                             {"voice", settings.request.voice},
                             {"texts", settings.texts.size()},
                             {"corpus", text.empty() ? corpus_path : "--text"},
                             {"duration_s", duration},
                             {"warmup_s", warmup},
                             {"client_cores", std::thread::hardware_concurrency()}}},
                           {"points", nlohmann::json::array()}};
  std::vector<voxbench::PointSummary> points;
  auto record = [&](std::vector<voxbench::Sample> samples, const char* mode, double level) {
    voxbench::PointSummary point = voxbench::Summarize(samples, duration);
    point.mode = mode;
    point.level = level;
    report["points"].push_back(voxbench::ToJson(point));
    points.push_back(point);
    voxbench::PrintTable({point}, points.size() == 1);
  };
  for (int c : concurrency) record(voxbench::RunClosedLoop(client, settings, c), "closed", c);
  for (double r : rates) record(voxbench::RunOpenLoop(client, settings, r), "open", r);

  int rc = 0;
  auto check = [&rc](const absl::Status& status) {
    if (!status.ok()) {
      std::cerr << "voxbench: " << status.message() << "\n";
      rc = 1;
    }
  };
  if (!json_path.empty()) check(voxbench::WriteFile(json_path, report.dump(2) + "\n"));
  if (!csv_path.empty()) check(voxbench::WriteFile(csv_path, voxbench::ToCsv(points)));
  if (!plot_path.empty()) {
    if (title.empty()) title = "voxbench: " + protocol + (stream ? " (stream)" : "") + ", " + call;
    check(voxbench::Plot(points, title, plot_path));
  }
  // A run with no success measured nothing but the failure: a script must not take it for one.
  size_t succeeded = 0;
  for (const voxbench::PointSummary& point : points) succeeded += point.ok;
  if (succeeded == 0) {
    std::cerr << "voxbench: every request failed (see the errors above)\n";
    if (rc == 0) rc = 3;
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) { return Run(argc, argv); }
