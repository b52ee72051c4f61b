// voxctl: voxserve from the shell.
//   voxctl say "Hello there." -v nova -o hello.mp3      voxctl voices --language en
//   echo "你好。" | voxctl say -v cmn -f wav > hi.wav    voxctl models
//   voxctl say --stream -f pcm "Long text..." | play -t raw -r 24000 -e signed -b 16 -c 1 -
//   voxctl --url ws://127.0.0.1:8080 say --stream -f pcm "Over the WebSocket stream." -o out.pcm
//   voxctl --url wyoming://127.0.0.1:10200 say -v en-us "Over Wyoming." -o hi.wav
//   voxctl health --ready
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "client/client.h"
#include "client/voxctl/commands.h"
#include "client/voxctl/exit_codes.h"

namespace {

using namespace voxserve;

constexpr char kExitCodes[] = R"(
Exit codes:
  0  success                          5  401/403: missing or wrong API key
  1  internal error                   6  429: server busy, after the retries
  2  usage: bad flags or no text      7  timeout (connect, attempt, total) or 504
  3  cannot reach the server, TLS     8  server error (500), broken stream
     failed, 502/503, not ready       9  cannot read the input or write the output
  4  request rejected (400, 404, 413: bad voice, text too long, ...)

Environment: VOXSERVE_URL (comma-separated endpoints), VOXSERVE_API_KEY.
)";

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string part =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!part.empty()) parts.push_back(part);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return parts;
}

int Run(int argc, char** argv) {
  CLI::App app{"voxctl: talk to a voxserve text-to-speech server", "voxctl"};
  app.footer(kExitCodes);
  app.require_subcommand(1);
  app.fallthrough();  // global flags (--url, -q, ...) also after the subcommand

  std::vector<std::string> urls;
  const char* env_url = std::getenv("VOXSERVE_URL");
  const char* env_key = std::getenv("VOXSERVE_API_KEY");
  client::ClientOptions options;
  options.api_key = env_key != nullptr ? env_key : "";
  double timeout_s = 60, connect_timeout_s = 5;
  int retries = 2;
  voxctl::Verbosity verbosity;
  app.add_option(
         "--url", urls,
         "server endpoint(s): http(s)://, grpc(s)://, ws(s):// (WebSocket speech stream) or "
         "wyoming:// (Home Assistant's protocol: pcm or wav, voice by name), e.g. "
         "http://127.0.0.1:8080; several fail over")
      ->delimiter(',');
  app.add_option("--api-key", options.api_key, "API key, sent as Authorization: Bearer");
  app.add_option("--cacert", options.tls.ca_file,
                 "PEM CA bundle to verify an https://, grpcs:// or wss:// server");
  app.add_option("--cert", options.tls.cert_file, "PEM client certificate (mTLS)");
  app.add_option("--key", options.tls.key_file, "PEM key of --cert");
  app.add_option("--server-name", options.tls.server_name,
                 "TLS name to verify (default: URL host)");
  app.add_flag(
      "--insecure", [&options](int64_t) { options.tls.verify_peer = false; },
      "accept any server certificate (testing only)");
  app.add_option("--timeout", timeout_s, "seconds for the whole call, retries included")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--connect-timeout", connect_timeout_s, "seconds to connect")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--retries", retries, "retries after the first attempt (429, 502-504, connect)")
      ->check(CLI::Range(0, 20))
      ->capture_default_str();
  app.add_flag("-q,--quiet", verbosity.quiet, "no summary line on stderr");
  app.add_flag("--verbose", verbosity.verbose, "print each attempt on stderr");

  voxctl::SayOptions say;
  CLI::App* say_cmd = app.add_subcommand("say", "synthesize text (argument or stdin) to audio");
  say_cmd->add_option("text", say.text, "the text; read from stdin when absent");
  say_cmd->add_option("-v,--voice", say.request.voice, "voice id, alias or OpenAI name")
      ->capture_default_str();
  say_cmd
      ->add_option("-f,--format", say.format,
                   "mp3, opus, aac, flac, wav or pcm (default: from -o's extension, else mp3; "
                   "wav for wyoming://)")
      ->check(CLI::IsMember({"mp3", "opus", "aac", "flac", "wav", "pcm"}));
  say_cmd->add_option("-o,--output", say.output, "file to write, - for stdout (default: stdout)");
  say_cmd->add_option("-m,--model", say.request.model, "model id or OpenAI model name")
      ->capture_default_str();
  say_cmd->add_option("--speed", say.request.speed, "0.25 .. 4.0")->capture_default_str();
  say_cmd->add_option("--instructions", say.request.instructions, "style instructions");
  say_cmd->add_option("--request-id", say.request.request_id, "X-Request-Id to send");
  say_cmd->add_flag("--stream", say.stream,
                    "write audio as it arrives (chunked transfer; ws:// always streams)");
  say_cmd->add_flag("--sse", say.sse, "like --stream, over server-sent events");

  client::VoiceFilter filter;
  bool json = false;
  CLI::App* voices_cmd = app.add_subcommand("voices", "list voices");
  voices_cmd->add_option("--language", filter.language, "only languages starting with this");
  voices_cmd->add_option("--model", filter.model, "only this model's voices");
  voices_cmd->add_flag("--json", json, "JSON instead of a table");
  CLI::App* models_cmd = app.add_subcommand("models", "list models and their state");
  models_cmd->add_flag("--json", json, "JSON instead of a table");
  CLI::App* health_cmd = app.add_subcommand("health", "print /health; exit 0 when ready, 3 if not");
  bool live = false, ready = false;
  health_cmd->add_flag("--live", live, "only /health/live (the process is up)");
  health_cmd->add_flag("--ready", ready, "only /health/ready");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    int code = app.exit(error);
    return code == 0 ? voxctl::kOk : voxctl::kUsage;
  }

  if (urls.empty()) urls = SplitCommas(env_url != nullptr ? env_url : "http://127.0.0.1:8080");
  options.endpoints = urls;
  // Wyoming carries raw PCM only: wav unless asked otherwise.
  if (std::all_of(urls.begin(), urls.end(),
                  [](const std::string& url) { return url.starts_with("wyoming://"); })) {
    say.fallback_format = "wav";
  }
  options.total_timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  options.attempt_timeout = options.total_timeout;
  options.connect_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(connect_timeout_s * 1000));
  options.retry.max_attempts = retries + 1;
  options.failover = client::Failover::kInOrder;
  // One short-lived call: a breaker has nothing to learn from.
  options.breaker.enabled = false;
  if (*health_cmd) options.retry.max_attempts = 1;
  auto created = client::Client::Create(options);
  if (!created.ok()) {
    std::cerr << "voxctl: " << created.status().message() << "\n";
    return voxctl::ExitCodeFor(created.status());
  }
  client::Client& client = **created;
  if (*say_cmd) return voxctl::Say(client, say, verbosity);
  if (*voices_cmd) return voxctl::ListVoices(client, filter, json, verbosity);
  if (*models_cmd) return voxctl::ListModels(client, json, verbosity);
  client::HealthProbe probe = live    ? client::HealthProbe::kLive
                              : ready ? client::HealthProbe::kReady
                                      : client::HealthProbe::kDetail;
  return voxctl::Health(client, probe, verbosity);
}

}  // namespace

int main(int argc, char** argv) { return Run(argc, argv); }
