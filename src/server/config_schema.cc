#include "server/config_schema.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "service/service_config.h"

namespace voxserve::server {
namespace {

using core::OptionSpec;
using core::OptionTable;

// An option's setter with what the configuration reference shows of it: its type and what the
// setter accepts.
struct Setter {
  std::string type;
  std::string bounds;
  std::function<absl::Status(std::string_view)> set;
};

template <typename Int>
Setter IntSetter(Int* target, long long min, long long max) {
  return {"integer", std::to_string(min) + ".." + std::to_string(max),
          [target, min, max](std::string_view text) {
            long long value = 0;
            if (absl::Status status = core::ParseInt(text, min, max, &value); !status.ok()) {
              return status;
            }
            *target = static_cast<Int>(value);
            return absl::OkStatus();
          }};
}

Setter StringSetter(std::string* target, std::string bounds = "") {
  return {"string", std::move(bounds), [target](std::string_view text) {
            *target = std::string(text);
            return absl::OkStatus();
          }};
}

// A list: comma-separated on the command line and in variables, a YAML sequence in the file.
Setter ListSetter(std::vector<std::string>* target, std::string bounds) {
  return {"string", std::move(bounds), [target](std::string_view text) {
            std::vector<std::string> entries = absl::StrSplit(
                absl::string_view(text.data(), text.size()), ',', absl::SkipWhitespace());
            for (std::string& entry : entries)
              entry = std::string(absl::StripAsciiWhitespace(entry));
            *target = std::move(entries);
            return absl::OkStatus();
          }};
}

Setter BoolSetter(bool* target) {
  return {"boolean", "true, false",
          [target](std::string_view text) { return core::ParseBool(text, target); }};
}

using AddOption = std::function<OptionSpec&(std::string key, std::string flag, std::string help,
                                            std::string fallback, Setter set)>;

// TLS and API keys (transport/tls, transport/auth), shared by every listener.
void AddSecurityOptions(ServerConfig& c, const AddOption& add) {
  transport::tls::TlsConfig& t = c.tls;
  add("tls.cert_file", "tls-cert-file",
      "PEM certificate chain; with tls.key_file the port serves HTTPS", "",
      StringSetter(&t.cert_file))
      .Example("/etc/voxserve/tls/server.pem")
      .Details(
          "TLS 1.2 and 1.3 only. SIGHUP re-reads the certificate, key and CA files: new "
          "connections get the new certificate, open ones keep theirs; a bad file keeps the old "
          "ones. Plain HTTP sent to the TLS port gets a 400 (`tls_required`). See "
          "[operations](operations.md#tls-and-mutual-tls).");
  add("tls.key_file", "tls-key-file", "PEM private key of the certificate", "",
      StringSetter(&t.key_file))
      .Example("/etc/voxserve/tls/server.key");
  add("tls.client_ca_file", "tls-client-ca-file",
      "PEM CA bundle that client certificates must chain to", "", StringSetter(&t.client_ca_file))
      .Example("/etc/voxserve/tls/clients-ca.pem");
  add("tls.client_auth", "tls-client-auth", "client certificates: none, optional or require",
      "none",
      {"string", "none, optional, require",
       [&t](std::string_view text) -> absl::Status {
         auto mode = transport::tls::ParseClientAuth(text);
         if (!mode.ok()) return mode.status();
         t.client_auth = *mode;
         return absl::OkStatus();
       }})
      .Example("require")
      .Details(
          "`optional`: a certificate, when sent, must chain to `tls.client_ca_file`; `require`: "
          "every client must send one (mutual TLS). The verified subject can authenticate "
          "through `client_subject` in the API keys file.");
  add("auth.keys_file", "api-keys-file",
      "YAML file of API keys, reloaded on SIGHUP; unset = no auth", "",
      StringSetter(&c.auth.keys_file))
      .Example("/etc/voxserve/api-keys.yaml")
      .Details(
          "With a keys file every request except `/health*` and `/metrics` needs a key "
          "(`Authorization: Bearer KEY` or `x-api-key: KEY`); without one the server logs "
          "`AUTHENTICATION IS OFF`. The file's format (names, secrets or their SHA-256, rate and "
          "concurrency limits, allowed models, mTLS subjects): "
          "[operations](operations.md#api-keys).");
  add("auth.token_secret_file", "token-secret-file",
      "file whose bytes (32 or more) sign access tokens; unset = random per process", "",
      StringSetter(&c.auth.token_secret_file))
      .Example("/etc/voxserve/token-secret")
      .Details(
          "Access tokens (`POST /v1/tokens`) are verified by the replica that minted them unless "
          "every replica reads the same secret (e.g. `openssl rand -hex 32`, a Kubernetes "
          "Secret). Changing it ends every token; an API key's tokens also end when the key is "
          "removed or its secret changes. See [operations](operations.md#access-tokens).");
  add("auth.protect_health", "protect-health", "require an API key for /health*", "false",
      BoolSetter(&c.auth.protect_health));
  add("auth.protect_metrics", "protect-metrics", "require an API key for /metrics", "false",
      BoolSetter(&c.auth.protect_metrics));
}

// The scalar options, declared once for all three sources (and for --help and the reference).
}  // namespace

OptionTable BuildOptionTable(ServerConfig& c) {
  OptionTable table;
  auto add = [&](std::string key, std::string flag, std::string help, std::string fallback,
                 Setter set) -> OptionSpec& {
    OptionSpec& spec = table.Add({std::move(key), std::move(flag), std::move(help),
                                  std::move(fallback), std::move(set.set)});
    spec.type = std::move(set.type);
    spec.bounds = std::move(set.bounds);
    return spec;
  };
  transport::http::HttpConfig& h = c.http;
  service::ServiceConfig& s = c.service;
  add("http.host", "host", "address to listen on", h.host, StringSetter(&h.host))
      .Example("0.0.0.0")
      .Details("`0.0.0.0` serves other machines; the default, this machine only.");
  add("http.port", "port", "port to listen on, 0..65535 (0 = any free port)",
      std::to_string(h.port), IntSetter(&h.port, 0, 65535))
      .Details("The log says `listening on http://HOST:PORT` (https with TLS).");
  add("http.io_threads", "io-threads", "HTTP I/O threads, 0 = one per core",
      std::to_string(h.io_threads), IntSetter(&h.io_threads, 0, 1024))
      .Details("I/O threads only parse, route and write; engines and encoders run elsewhere.");
  add("http.max_body_bytes", "max-body-bytes", "largest request body accepted (413 above)",
      std::to_string(h.max_body_bytes), IntSetter(&h.max_body_bytes, 1024, 1LL << 30))
      .Details(
          "Refused as soon as `Content-Length` says so, before the body is read. A connection "
          "holds at most this much, so the worst case is about `max_connections` times it.");
  add("http.max_header_bytes", "max-header-bytes", "largest request header block (431 above)",
      std::to_string(h.max_header_bytes), IntSetter(&h.max_header_bytes, 1024, 1 << 20));
  add("http.header_timeout_ms", "header-timeout-ms", "time allowed to send the request headers",
      std::to_string(h.header_timeout_ms), IntSetter(&h.header_timeout_ms, 1, 3'600'000))
      .Details(
          "The whole request head (and the TLS handshake) must arrive in time, else the "
          "connection is closed (slowloris).");
  add("http.body_timeout_ms", "body-timeout-ms", "time allowed to send the request body",
      std::to_string(h.body_timeout_ms), IntSetter(&h.body_timeout_ms, 1, 3'600'000));
  add("http.idle_timeout_ms", "idle-timeout-ms", "keep-alive connection idle time before closing",
      std::to_string(h.idle_timeout_ms), IntSetter(&h.idle_timeout_ms, 1, 3'600'000));
  add("http.write_timeout_ms", "write-timeout-ms",
      "time a client may take to accept one write before it is cut off",
      std::to_string(h.write_timeout_ms), IntSetter(&h.write_timeout_ms, 1, 3'600'000))
      .Details("Also for WebSocket clients that read nothing.");
  add("http.max_connections", "max-connections", "open connections before new ones are refused",
      std::to_string(h.max_connections), IntSetter(&h.max_connections, 1, 1'000'000))
      .Details(
          "One over gets `503` + `Retry-After: 1` + `Connection: close` (on a TLS port: closed). "
          "At start it is lowered to the open-file limit minus 512, with a warning: the default "
          "needs a hard `RLIMIT_NOFILE` of at least 10,512 "
          "([operations](operations.md#open-files)). gRPC connections are not counted.");
  add("http.playground", "playground",
      "serve the web playground at / (true or false); its files need no API key",
      h.playground ? "true" : "false", BoolSetter(&h.playground))
      .Details("`false`: `/` is a JSON 404. See [the playground](playground.md).");
  transport::http::CorsConfig& cors = h.cors;
  add("http.cors.allowed_origins", "cors-allowed-origins",
      "web origins whose pages may call the API from a browser, comma-separated (YAML: a list); "
      "* for any; empty = none (CORS off)",
      "", ListSetter(&cors.allowed_origins, "origins: scheme://host[:port], or *"))
      .Example("https://app.example.com")
      .Details(
          "Preflights (`OPTIONS`) are answered before API keys are checked; responses to an "
          "allowed origin carry `Access-Control-Allow-Origin` and the exposed headers, streamed "
          "ones too. While it is set, a WebSocket handshake from a browser (one with an `Origin`) "
          "is accepted only from the server's own origin or a listed one (403 `cors_refused`). "
          "See [operations](operations.md#browsers-cors).")
      .list = true;
  add("http.cors.allowed_methods", "cors-allowed-methods",
      "methods a page may use across origins, comma-separated (YAML: a list)",
      absl::StrJoin(cors.allowed_methods, ","), ListSetter(&cors.allowed_methods, "HTTP methods"))
      .list = true;
  add("http.cors.allowed_headers", "cors-allowed-headers",
      "request headers a page may send across origins, comma-separated (YAML: a list)",
      absl::StrJoin(cors.allowed_headers, ","),
      ListSetter(&cors.allowed_headers, "HTTP header names"))
      .list = true;
  add("http.cors.exposed_headers", "cors-exposed-headers",
      "response headers a page may read across origins, comma-separated (YAML: a list)",
      absl::StrJoin(cors.exposed_headers, ","),
      ListSetter(&cors.exposed_headers, "HTTP header names"))
      .list = true;
  add("http.cors.max_age_seconds", "cors-max-age-seconds",
      "how long a browser may reuse a preflight's answer", std::to_string(cors.max_age_seconds),
      IntSetter(&cors.max_age_seconds, 0, 86'400));
  transport::grpc::GrpcConfig& g = c.grpc;
  add("grpc.enabled", "grpc-enabled", "serve the gRPC API (true or false)",
      g.enabled ? "true" : "false", BoolSetter(&g.enabled))
      .Details("The API: [gRPC](grpc.md).");
  add("grpc.host", "grpc-host", "address gRPC listens on; empty = http.host", g.host,
      StringSetter(&g.host))
      .Example("0.0.0.0");
  add("grpc.port", "grpc-port", "gRPC port, 0..65535 (0 = any free port)", std::to_string(g.port),
      IntSetter(&g.port, 0, 65535))
      .Details("The log says `gRPC listening on HOST:PORT`.");
  add("grpc.max_message_bytes", "grpc-max-message-bytes",
      "largest gRPC request message accepted (RESOURCE_EXHAUSTED above)",
      std::to_string(g.max_message_bytes), IntSetter(&g.max_message_bytes, 1024, 1LL << 30));
  add("grpc.reflection", "grpc-reflection", "serve gRPC server reflection (true or false)",
      g.reflection ? "true" : "false", BoolSetter(&g.reflection))
      .Details("Lets `grpcurl` call the server without the proto files.");
  transport::websocket::WebSocketConfig& w = c.websocket;
  add("websocket.max_message_bytes", "ws-max-message-bytes",
      "largest WebSocket message a client may send (close code 1009 above)",
      std::to_string(w.max_message_bytes), IntSetter(&w.max_message_bytes, 1024, 64LL << 20));
  add("websocket.ping_interval_ms", "ws-ping-interval-ms",
      "WebSocket ping after this long without a frame; twice as long silent = dropped",
      std::to_string(w.ping_interval_ms), IntSetter(&w.ping_interval_ms, 100, 3'600'000))
      .Details("Pongs count as frames.");
  add("websocket.idle_timeout_ms", "ws-idle-timeout-ms",
      "WebSocket with no message and nothing to synthesize this long is closed (1008)",
      std::to_string(w.idle_timeout_ms), IntSetter(&w.idle_timeout_ms, 1, 86'400'000));
  transport::wyoming::WyomingConfig& y = c.wyoming;
  add("wyoming.enabled", "wyoming-enabled",
      "serve the Wyoming protocol (Home Assistant TTS; no auth: bind it to loopback or the LAN)",
      y.enabled ? "true" : "false", BoolSetter(&y.enabled))
      .Example("true")
      .Details("Wyoming has no authentication: see [Wyoming](wyoming.md) for how to protect it.");
  add("wyoming.host", "wyoming-host", "address Wyoming listens on; empty = http.host", y.host,
      StringSetter(&y.host))
      .Example("192.168.1.10");
  add("wyoming.port", "wyoming-port", "Wyoming port, 0..65535 (10200: Home Assistant's usual)",
      std::to_string(y.port), IntSetter(&y.port, 0, 65535));
  add("wyoming.max_connections", "wyoming-max-connections",
      "open Wyoming connections before new ones are refused", std::to_string(y.max_connections),
      IntSetter(&y.max_connections, 1, 100'000));
  add("wyoming.idle_timeout_ms", "wyoming-idle-timeout-ms",
      "Wyoming connection with no event and nothing to synthesize this long is closed",
      std::to_string(y.idle_timeout_ms), IntSetter(&y.idle_timeout_ms, 1, 86'400'000));
  add("wyoming.allow", "wyoming-allow",
      "client addresses or networks served, comma-separated (YAML: a list), e.g. "
      "192.168.1.0/24,::1; empty = any",
      "", ListSetter(&y.allow, "addresses or CIDR networks"))
      .Example("192.168.1.0/24")
      .list = true;
  add("wyoming.zeroconf", "wyoming-zeroconf",
      "announce Wyoming over mDNS (_wyoming._tcp) so Home Assistant discovers it",
      y.zeroconf ? "true" : "false", BoolSetter(&y.zeroconf))
      .Details(
          "Only while `wyoming.enabled` and Wyoming listens where other machines can reach it "
          "(not a loopback address). Avahi's embedded responder: no daemon needed; in a "
          "container it needs the host's network (`network_mode: host`). See "
          "[Wyoming](wyoming.md#home-assistant-on-one-box).");
  add("wyoming.zeroconf_name", "wyoming-zeroconf-name",
      "the name announced, which Home Assistant shows (renamed \"NAME #2\" if taken)",
      y.zeroconf_name, StringSetter(&y.zeroconf_name))
      .Example("kitchen-voxserve");
  add("default_model", "default-model", "model used when a request names none or an OpenAI model",
      "first model", StringSetter(&s.default_model))
      .Example("espeak")
      .Details(
          "OpenAI's model names (`tts-1`, `tts-1-hd`, `gpt-4o-mini-tts`) are aliases of it; a "
          "request may name any model id from `/v1/models` instead.");
  add("limits.max_input_chars", "max-input-chars", "longest input text in characters (413 above)",
      std::to_string(s.limits.max_input_chars), IntSetter(&s.limits.max_input_chars, 1, 1'000'000))
      .Details("Counted in Unicode characters (code points), on every API.");
  add("limits.max_stream_input_chars", "max-stream-input-chars",
      "text one incremental stream (WebSocket, gRPC bidi, ElevenLabs stream-input) may send, "
      "all pieces together (413 above)",
      std::to_string(s.limits.max_stream_input_chars),
      IntSetter(&s.limits.max_stream_input_chars, 1, 100'000'000))
      .Details("Each sentence of a stream is checked against this bound, not `max_input_chars`.");
  add("limits.max_audio_seconds", "max-audio-seconds",
      "audio one whole-file request may make (413 output_too_long above)",
      std::to_string(s.max_audio_seconds), IntSetter(&s.max_audio_seconds, 1, 86'400))
      .Details(
          "Counted as the engine makes it: past the bound the request's remaining segments are "
          "cancelled, so an over-long text costs no more than the bound's worth of work.");
  add("limits.max_stream_audio_seconds", "max-stream-audio-seconds",
      "audio one streamed request or stream may make, all sentences together (cut with "
      "output_too_long above)",
      std::to_string(s.max_stream_audio_seconds),
      IntSetter(&s.max_stream_audio_seconds, 1, 604'800))
      .Details(
          "A stream already under way ends with its transport's error: a cut chunked body, an "
          "SSE `error` event, a gRPC status, a WebSocket `error` event then close 1008.");
  add("limits.request_timeout_ms", "request-timeout-ms", "deadline of a request that names none",
      std::to_string(s.default_timeout_ms), IntSetter(&s.default_timeout_ms, 1, 86'400'000))
      .Details(
          "A request may name its own (`timeout_ms`, or the gRPC deadline: the earlier wins), up "
          "to `limits.max_request_timeout_ms`.");
  add("limits.max_request_timeout_ms", "max-request-timeout-ms",
      "longest deadline a request may ask for", std::to_string(s.max_timeout_ms),
      IntSetter(&s.max_timeout_ms, 1, 86'400'000));
  add("limits.max_segment_chars", "max-segment-chars",
      "longest segment sent to an engine; longer sentences are cut at clause boundaries",
      std::to_string(s.max_segment_chars), IntSetter(&s.max_segment_chars, 16, 100'000))
      .Details(
          "Incremental text (WebSocket, gRPC `StreamingSynthesize`) held past this length is cut "
          "at a clause mark or a space too.");
  add("limits.stream_buffer_bytes", "stream-buffer-bytes",
      "encoded audio a slow streaming client may hold back before its request pauses",
      std::to_string(s.stream_buffer_bytes), IntSetter(&s.stream_buffer_bytes, 1024, 1LL << 30))
      .Details("Synthesis of that request resumes when the client reads.");
  add("service.pipeline_depth", "pipeline-depth",
      "segments of one request queued at once (2 overlaps encoding with synthesis)",
      std::to_string(s.pipeline_depth), IntSetter(&s.pipeline_depth, 1, 64))
      .Details("So that one long text cannot flood a model's queue.");
  add("service.encode_threads", "encode-threads", "threads that resample and encode, 0 = cores",
      std::to_string(s.encode_threads), IntSetter(&s.encode_threads, 0, 1024));
  add("models_dir", "models", "folder scanned for Piper voices and Kokoro models", "",
      StringSetter(&c.models_dir))
      .Example("/var/lib/voxserve/models")
      .Details(
          "Piper: an `*.onnx` with its `*.onnx.json` beside it; Kokoro: an `*.onnx` with a "
          "`voices*.bin` or a `voices/` folder beside it. Subfolders are searched 6 levels deep "
          "(piper-voices' own en/en_US/lessac/medium layout fits); "
          "each file found becomes a model beside the configured ones (a configured model of the "
          "same id wins). See [engines and models](models.md#piper-and-kokoro).");
  add("skip_broken_models", "skip-broken-models",
      "true: a model that fails to load is skipped with a warning instead of keeping the "
      "server not ready",
      "false", BoolSetter(&s.skip_broken_models))
      .Details("The server then reports `degraded`, with the model `failed` and its error.");
  add("log.level", "log-level", "trace, debug, info, warn, error or off", c.log_level,
      StringSetter(&c.log_level, "trace, debug, info, warn, error, off"));
  add("log.format", "log-format", "text or json", c.log_format,
      StringSetter(&c.log_format, "text, json"))
      .Example("json")
      .Details(
          "`json`: one object per line; `text`: `msg key=value ...`. What each line holds: "
          "[operations](operations.md#logs).");
  add("drain_timeout_ms", "drain-timeout-ms",
      "on SIGTERM, how long in-flight requests may run before exit",
      std::to_string(c.drain_timeout_ms), IntSetter(&c.drain_timeout_ms, 0, 3'600'000))
      .Details(
          "SIGTERM (or Ctrl-C): not ready, new calls get a retriable 503 / `UNAVAILABLE`, "
          "in-flight requests finish, exit 0. An orchestrator's grace period must exceed it.");
  service::ResponseCacheConfig& rc = s.cache;
  add("cache.enabled", "cache-enabled",
      "keep finished audio of deterministic requests in memory and replay it to identical ones",
      rc.enabled ? "true" : "false", BoolSetter(&rc.enabled))
      .Example("true")
      .Details(
          "Off by default: it holds up to `cache.max_bytes` more memory per replica, which a "
          "container's memory limit must allow for, and it keeps the text of past requests in "
          "memory after they end. Requests may refuse it (`Cache-Control: no-cache` or "
          "`no-store`); answers say `X-Cache: hit|miss|bypass`. See "
          "[the response cache](response-cache.md).");
  add("cache.max_bytes", "cache-max-bytes",
      "memory the response cache may hold: audio, timings and keys", std::to_string(rc.max_bytes),
      IntSetter(&rc.max_bytes, 1LL << 20, 1LL << 40))
      .Example("1073741824")
      .Details(
          "The default holds ~45 minutes of 48 kHz 16-bit WAV, or ~20 hours of 32 kbit/s MP3. "
          "Least recently used answers go first; answers asked for twice are kept longest "
          "(segmented LRU).");
  add("cache.max_entries", "cache-max-entries", "answers the response cache may hold",
      std::to_string(rc.max_entries), IntSetter(&rc.max_entries, 1, 10'000'000));
  add("cache.max_entry_bytes", "cache-max-entry-bytes",
      "largest answer stored; larger ones are synthesized every time",
      std::to_string(rc.max_entry_bytes), IntSetter(&rc.max_entry_bytes, 1024, 1LL << 40))
      .Details("So that one long chapter cannot push out hundreds of short prompts.");
  add("text.normalize", "text-normalize",
      "write numbers, dates, times, currency, units and abbreviations out as words for Piper, "
      "Kokoro and CosyVoice",
      s.normalize_text ? "true" : "false", BoolSetter(&s.normalize_text))
      .Example("false")
      .Details(
          "English and Chinese rules (\"3.5 kg\" → \"three point five kilograms\"); "
          "espeak-ng reads numbers itself and gets the text as sent. A request may override it "
          "with `apply_text_normalization` (`auto`, `on`, `off`). See "
          "[text normalization](text-normalization.md).");
  store::DictionaryStoreConfig& d = s.dictionaries;
  add("dictionaries.backend", "dictionaries-backend",
      "where pronunciation dictionaries live: dir (dictionaries.dir, one machine) or postgres "
      "(shared by replicas)",
      d.backend, StringSetter(&d.backend, "dir, postgres"))
      // Not "postgres": this section's example would then need voices.postgres.* to load.
      .Example("dir")
      .Details(
          "`postgres`: every replica shares one registry in PostgreSQL, in the same database as "
          "the voices' (it connects with voices.postgres.dsn / dsn_env / dsn_file and uses "
          "voices.postgres.resync_ms and the timeouts; voices.backend may stay `dir`). Each "
          "replica holds every dictionary in memory; a change on one is seen by all at once "
          "(LISTEN/NOTIFY). See [pronunciation dictionaries](pronunciation-dictionaries.md#storage-"
          "limits-and-several-replicas).");
  add("dictionaries.dir", "dictionaries-dir",
      "directory of pronunciation dictionaries (/v1/pronunciation-dictionaries); unset (with "
      "dictionaries.backend dir) = that API and request locators are off",
      "", StringSetter(&d.dir))
      .Example("/var/lib/voxserve/dictionaries")
      .Details(
          "One file per dictionary with its versions, written atomically. A model's own lexicon "
          "files (`models[].lexicons`) need no directory. See "
          "[pronunciation dictionaries](pronunciation-dictionaries.md).");
  add("dictionaries.max_count", "dictionaries-max-count",
      "pronunciation dictionaries kept, archived ones included (507 above)",
      std::to_string(d.max_count), IntSetter(&d.max_count, 1, 1'000'000));
  add("dictionaries.max_bytes", "dictionaries-max-bytes",
      "bytes of dictionary files together (507 above)", std::to_string(d.max_bytes),
      IntSetter(&d.max_bytes, 1 << 16, 1LL << 40));
  add("dictionaries.max_upload_bytes", "dictionaries-max-upload-bytes",
      "largest PLS/JSON file or rules body accepted (413 above)",
      std::to_string(d.max_upload_bytes), IntSetter(&d.max_upload_bytes, 1024, 1LL << 30));
  add("dictionaries.max_versions", "dictionaries-max-versions",
      "versions kept per dictionary; a locator naming an older one gets 404",
      std::to_string(d.max_versions), IntSetter(&d.max_versions, 1, 1000))
      .Details("Every rules change (add-rules, remove-rules, set-rules) makes a version.");
  add("dictionaries.max_rules", "dictionaries-max-rules",
      "rules one dictionary version may hold (one per grapheme, as ElevenLabs counts them)",
      std::to_string(d.limits.max_rules), IntSetter(&d.limits.max_rules, 1, 1'000'000));
  store::VoiceStoreConfig& v = s.voices;
  add("voices.backend", "voices-backend",
      "where cloned voices live: dir (voices.dir, one machine) or postgres (shared by replicas)",
      v.backend, StringSetter(&v.backend, "dir, postgres"))
      .Example("postgres")
      .Details(
          "`postgres`: every replica shares one registry in PostgreSQL (voices.postgres.*); a "
          "registration or deletion on one is seen by all at once (LISTEN/NOTIFY). See "
          "[voice cloning](voice-cloning.md#shared-registry-postgresql).");
  add("voices.dir", "voices-dir",
      "directory of cloned voices (POST /v1/audio/voices); unset = voice cloning off", "",
      StringSetter(&v.dir))
      .Example("/var/lib/voxserve/voices")
      .Details("Atomic, checksummed files, one per voice: [voice cloning](voice-cloning.md).");
  add("voices.postgres.dsn", "voices-postgres-dsn",
      "voices.backend postgres: libpq connection string or URI", "", StringSetter(&v.postgres_dsn))
      .Example("postgresql://voxserve@db:5432/voxserve")
      .Details(
          "Keep passwords out of the file: name an environment variable (voices.postgres.dsn_env) "
          "or a file (voices.postgres.dsn_file, e.g. a mounted Kubernetes Secret) instead, or use "
          "libpq's PGPASSFILE. The schema is created and migrated by the server.");
  add("voices.postgres.dsn_env", "voices-postgres-dsn-env",
      "name of an environment variable holding the DSN (when voices.postgres.dsn is unset)", "",
      StringSetter(&v.postgres_dsn_env))
      .Example("DATABASE_URL");
  add("voices.postgres.dsn_file", "voices-postgres-dsn-file",
      "file holding the DSN (when voices.postgres.dsn and dsn_env are unset)", "",
      StringSetter(&v.postgres_dsn_file))
      .Example("/run/secrets/voxserve-db/dsn");
  add("voices.postgres.resync_ms", "voices-postgres-resync-ms",
      "full re-read of the shared registry, a fallback to LISTEN/NOTIFY",
      std::to_string(v.postgres_resync_ms), IntSetter(&v.postgres_resync_ms, 100, 3'600'000));
  add("voices.postgres.statement_timeout_ms", "voices-postgres-timeout-ms",
      "longest a database call may take before the request gets 503 (a registration or "
      "deletion as a whole, each statement of the listener; kept by voxserve, so a frozen "
      "database is bounded too)",
      std::to_string(v.postgres_statement_timeout_ms),
      IntSetter(&v.postgres_statement_timeout_ms, 100, 600'000));
  add("voices.postgres.idle_in_transaction_timeout_ms", "voices-postgres-idle-timeout-ms",
      "longest a registration's transaction may sit idle (its replica stalled or cut off) "
      "before PostgreSQL ends it and frees the registration lock",
      std::to_string(v.postgres_idle_in_transaction_timeout_ms),
      IntSetter(&v.postgres_idle_in_transaction_timeout_ms, 100, 600'000))
      .Example("5000")
      .Details(
          "Every registration holds one advisory lock (the count and byte bounds hold across "
          "replicas). A replica stopped or cut off inside one would otherwise keep it until TCP "
          "gives up on the connection (hours) and every other replica's registrations would time "
          "out meanwhile; with this PostgreSQL `idle_in_transaction_session_timeout`, they wait at "
          "most this long. Keep it below voices.postgres.statement_timeout_ms (their wait's "
          "bound). A DSN whose `options` set `idle_in_transaction_session_timeout` wins.");
  add("voices.max_count", "voices-max-count", "cloned voices kept, all models (507 above)",
      std::to_string(v.max_count), IntSetter(&v.max_count, 1, 1'000'000));
  add("voices.max_bytes", "voices-max-bytes", "bytes of cloned-voice files together (507 above)",
      std::to_string(v.max_bytes), IntSetter(&v.max_bytes, 1 << 20, 1LL << 40));
  add("voices.max_upload_bytes", "voices-max-upload-bytes",
      "largest audio sample accepted to clone a voice (413 above)",
      std::to_string(v.max_upload_bytes), IntSetter(&v.max_upload_bytes, 1024, 1LL << 30));
  add("voices.max_pending", "voices-max-pending", "voice registrations cloned at once (429 above)",
      std::to_string(v.max_pending), IntSetter(&v.max_pending, 1, 1024));
  add("voices.test_cloner", "voices-test-cloner",
      "TEST ONLY: models that cannot clone get a stand-in cloner (profile family 'test')", "false",
      BoolSetter(&v.test_cloner));
  AddSecurityOptions(c, add);
  add("testing.fault_injection", "fault-injection",
      "TEST ONLY: serve POST /testing/faults, which makes requests fail, wait or drop", "false",
      BoolSetter(&c.fault_injection))
      .Details(
          "Never in production: logged as a warning when on. Worker processes then also obey "
          "the texts `VOXSERVE_TEST_HANG` and `VOXSERVE_TEST_CRASH`. See "
          "[development](development.md#client-tests-and-fault-injection).");
  return table;
}

// The bounds are SchedulerConfig::Validate's (server_config_test holds them to it).
constexpr SchedulingKey kSchedulingKeys[] = {
    {"max_batch_size", &scheduler::SchedulerConfig::max_batch_size, "1..1024",
     "Whole-segment engines: segments per engine call, capped by the engine (espeak: 1; Piper "
     "only with duration outputs; Kokoro: 1). Ignored by streaming engines."},
    {"max_active", &scheduler::SchedulerConfig::max_active, "1..1024",
     "Streaming engines (CosyVoice, tone): segments one instance advances together per step, "
     "capped by the engine's own maximum. Ignored by whole-segment engines."},
    {"max_queue_delay_ms", &scheduler::SchedulerConfig::max_queue_delay_ms, "0..10000",
     "How long a partial batch waits for company (Triton's dynamic batcher): a batch leaves full "
     "or when its oldest segment has waited this long."},
    {"queue_capacity", &scheduler::SchedulerConfig::queue_capacity, "1..1000000",
     "Queued segments before new requests get 429 (gRPC `RESOURCE_EXHAUSTED`) with a "
     "`Retry-After` from the measured drain rate. Later segments of admitted requests are never "
     "refused."},
    {"first_segment_lead_ms", &scheduler::SchedulerConfig::first_segment_lead_ms, "0..600000",
     "How far a request's first segment may jump ahead of other requests' later segments: quick "
     "first audio without starving anyone."},
    {"batch_timeout_ms", &scheduler::SchedulerConfig::batch_timeout_ms, "10..3600000",
     "Worker processes: a batch (or one streaming step) running longer gets its worker killed "
     "and restarted; its segments end with 503 `engine_instance_lost`."},
    {"heartbeat_ms", &scheduler::SchedulerConfig::heartbeat_ms, "10..600000",
     "Worker processes: an idle worker is pinged this often and must answer as fast."},
    {"startup_timeout_ms", &scheduler::SchedulerConfig::startup_timeout_ms, "100..3600000",
     "Worker processes: spawn, engine load and warm-up of one worker."},
};

std::span<const SchedulingKey> SchedulingKeys() { return kSchedulingKeys; }

namespace {

core::KeyDoc DocOf(const OptionSpec& spec) {
  // --help's line as a sentence ("gRPC ..." keeps its case), then the details.
  std::string description = spec.help;
  std::string_view first_word = std::string_view(description).substr(0, description.find(' '));
  auto upper = [](char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; };
  if (!description.empty() && std::none_of(first_word.begin(), first_word.end(), upper)) {
    description[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(description[0])));
  }
  if (!description.ends_with('.')) description += '.';
  if (!spec.details.empty()) description += " " + spec.details;
  return {.description = description,
          .type = spec.type,
          .default_value = spec.default_value,
          .bounds = spec.bounds,
          .example = spec.example,
          .flag = "--" + spec.flag,
          .env = OptionTable::EnvName(spec.flag)};
}

std::string OpenAiVoiceMapping() {
  std::string text;
  for (const auto& [name, voice] : service::DefaultOpenAiVoicesForEspeak()) {
    text += (text.empty() ? "" : ", ") + name + ": " + voice;
  }
  return text;
}

core::YamlSchema SchedulingSchema() {
  using core::YamlSchema;
  const scheduler::SchedulerConfig defaults;
  YamlSchema scheduling = YamlSchema::Fields();
  scheduling.Doc({.description =
                      "How the model's requests are queued, batched and run: "
                      "[engines](engines.md) and [operations](operations.md#worker-processes)."});
  scheduling
      .Field("isolation",
             YamlSchema::Scalar().Doc(
                 {.description =
                      "Where instances run: threads of the server, or each in a worker process "
                      "of its own (the same binary; a crash or hang loses only that worker, which "
                      "is restarted alone). espeak speaks in processes of its own either way "
                      "(a crash or hang there costs one request), so threads are its default: "
                      "no worker hop on the request path.",
                  .type = "string",
                  .default_value = "thread (process when `devices` or `cpus` are listed)",
                  .bounds = "thread, process",
                  .example = "process"}))
      .Field("instances",
             YamlSchema::Scalar().Doc(
                 {.description =
                      "Engine instances (threads or workers). `auto`: one worker per usable CPU; "
                      "one per device with `devices`; one for cosyvoice without `devices`; for "
                      "threads, one per usable CPU for espeak (its calls run in parallel), else 1.",
                  .type = "integer or auto",
                  .default_value = "auto for espeak, else 1",
                  .bounds = "1..256, auto",
                  .example = "2"}));
  for (const SchedulingKey& key : kSchedulingKeys) {
    scheduling.Field(key.name,
                     YamlSchema::Scalar().Doc({.description = key.description,
                                               .type = "integer",
                                               .default_value = std::to_string(defaults.*key.field),
                                               .bounds = key.bounds}));
  }
  scheduling
      .Field("devices",
             YamlSchema::ScalarOrListOf(YamlSchema::Scalar())
                 .Doc({.description =
                           "GPU ids, one worker each (implies `isolation: process`): worker i runs "
                           "with `CUDA_VISIBLE_DEVICES=devices[i]` (ONNX engines use their CUDA "
                           "device 0 then).",
                       .type = "list of strings",
                       .example = "[0, 1]"}))
      .Field("cpus",
             YamlSchema::ScalarOrListOf(YamlSchema::Scalar())
                 .Doc({.description =
                           "CPU affinity (implies `isolation: process`): one cpu list for every "
                           "worker, or a list where worker i gets entry i mod n. Unless `options` "
                           "set `intra_op_threads`, an ONNX worker gets max(1, cores / workers "
                           "sharing its CPU set) threads.",
                       .type = "cpu list, or a list of them",
                       .example = "\"0-3\""}));
  return scheduling;
}

core::YamlSchema ModelSchema() {
  using core::YamlSchema;
  return YamlSchema::Fields()
      .Field("id", YamlSchema::Scalar().Doc({.description =
                                                 "Required. The model's id in `/v1/models` and in "
                                                 "requests (`model`), in logs and metric labels.",
                                             .type = "string",
                                             .default_value = "none: required",
                                             .example = "espeak"}))
      .Field("engine", YamlSchema::Scalar().Doc(
                           {.description = "What runs the model: [engines and models](models.md).",
                            .type = "string",
                            .default_value = "espeak",
                            .bounds = "espeak, piper, kokoro, cosyvoice, tone",
                            .example = "espeak"}))
      .Field("default_voice",
             YamlSchema::Scalar().Doc(
                 {.description = "The voice of requests that name none (or `default`).",
                  .type = "string",
                  .default_value = "the engine's (espeak: en-us)",
                  .example = "en-us"}))
      // Engine-specific; each engine names its unknown options when the model loads.
      .Field("options",
             YamlSchema::MapOf(
                 YamlSchema::Scalar().Doc({.description = "One engine option (tables below).",
                                           .type = "string, number or boolean"}),
                 "option")
                 .Doc({.description =
                           "Engine-specific options, checked by the engine when the model loads: "
                           "an unknown one is an error that lists the allowed keys. Per engine: "
                           "[engine options](#engine-options).",
                       .type = "mapping",
                       .example = "{data_path: /usr/lib/x86_64-linux-gnu/espeak-ng-data}"}))
      .Field("scheduling", SchedulingSchema())
      .Field("lexicons",
             YamlSchema::ListOf(YamlSchema::Scalar())
                 .Doc({.description =
                           "Pronunciation lexicons (W3C PLS or voxserve's JSON) every request of "
                           "this model speaks with, after the dictionaries the request names. "
                           "Read at startup; a bad file stops it. See "
                           "[pronunciation dictionaries](pronunciation-dictionaries.md).",
                       .type = "list of file paths",
                       .default_value = "[]",
                       .example = "[/etc/voxserve/brand-names.pls]"}))
      .Field("warmup",
             YamlSchema::ListOf(YamlSchema::Scalar())
                 .Doc({.description = "Texts synthesized before the model counts as ready "
                                      "(`/health/ready` turns 200 once every model is warm).",
                       .type = "list of strings",
                       .default_value = "[\"Hello.\"]",
                       .example = "[\"Hello.\"]"}));
}

}  // namespace

// Every key the file may hold, checked before any value is read (core/yaml_schema.h), with what
// it means (the configuration reference is made from it): the scalar options come from the
// option table, the structured sections are listed here. Unknown keys are errors, not warnings:
// a misspelled limit must not start a server without it.
core::YamlSchema ConfigFileSchema(const OptionTable& table) {
  using core::YamlSchema;
  YamlSchema schema = YamlSchema::Fields();
  for (const OptionSpec& spec : table.specs()) {
    schema.Field(spec.yaml_key, (spec.list ? YamlSchema::ScalarOrListOf(YamlSchema::Scalar())
                                           : YamlSchema::Scalar())
                                    .Doc(DocOf(spec)));
  }
  schema.Field("models",
               YamlSchema::ListOf(ModelSchema())
                   .Doc({.description = "The models to serve. Piper voices and Kokoro models "
                                        "found under `models_dir` are added to them.",
                         .type = "list of mappings",
                         .default_value = "one espeak-ng model, espeak"}));
  schema.Field(
      "voice_aliases",
      YamlSchema::MapOf(
          YamlSchema::ScalarOrFields(
              YamlSchema::Fields()
                  .Field("model", YamlSchema::Scalar().Doc({.description = "A model id.",
                                                            .type = "string",
                                                            .default_value = "default_model"}))
                  .Field("voice",
                         YamlSchema::Scalar().Doc(
                             {.description = "A voice id of that model.", .type = "string"})))
              .Doc({.description = "A voice of the default model, or a model and its voice.",
                    .type = "string, or a mapping"}),
          "alias")
          .Doc({.description =
                    "Names clients may use for voices, everywhere (REST, WebSocket, gRPC); a name "
                    "here overrides a built-in one. An alias naming a voice its model lacks fails "
                    "startup (`/health` `failed`, with the reason).",
                .type = "mapping",
                .example = "{zh_female: cmn+f3, narrator: {model: espeak, voice: en-gb+m3}}"}));
  schema.Field(
      "openai_voices",
      YamlSchema::MapOf(
          YamlSchema::Scalar().Doc({.description = "The voice it stands for.", .type = "string"}),
          "openai_name")
          .Doc({.description = "Which voice each of OpenAI's voice names stands for; entries here "
                               "replace those of the built-in mapping, one by one.",
                .type = "mapping",
                .default_value = OpenAiVoiceMapping(),
                .example = "{alloy: en-us+f2}"}));
  schema.Describe("http",
                  "The HTTP listener: REST, SSE, WebSocket, the playground, `/health`, "
                  "`/metrics`.");
  schema.Describe("grpc", "The gRPC listener (its own port).");
  schema.Describe("websocket", "The WebSocket speech stream, `GET /v1/audio/speech/stream`.");
  schema.Describe("wyoming",
                  "The Wyoming listener (Home Assistant's voice protocol; its own port, off by "
                  "default): [Wyoming](wyoming.md).");
  schema.Describe("limits", "What one request may ask for, on every API.");
  schema.Describe("service", "How requests flow from the API to the engines.");
  schema.Describe("log", "Log lines on stderr.");
  schema.Describe("cache",
                  "The response cache: finished audio replayed to identical requests "
                  "([response cache](response-cache.md)).");
  schema.Describe("text", "What the server does to the text before the engines read it.");
  schema.Describe("dictionaries",
                  "Pronunciation dictionaries managed through ElevenLabs' API and named by the "
                  "requests' locators ([pronunciation "
                  "dictionaries](pronunciation-dictionaries.md)).");
  schema.Describe("voices", "Cloned voices (voice cloning models such as CosyVoice).");
  schema.Describe("voices.postgres",
                  "The shared voice registry (voices.backend postgres): every replica on one "
                  "PostgreSQL.");
  schema.Describe("http.cors",
                  "Which web pages, by origin, may call the API from a browser (off until origins "
                  "are listed): [operations](operations.md#browsers-cors).");
  schema.Describe("tls", "HTTPS and mutual TLS on the HTTP port.");
  schema.Describe("auth", "API keys.");
  schema.Describe("testing", "Test-only switches: never in production.");
  return schema;
}

core::YamlSchema DocumentedConfigSchema() {
  ServerConfig config;  // the options' defaults; its setters point here but are never called
  OptionTable table = BuildOptionTable(config);
  return ConfigFileSchema(table);
}

}  // namespace voxserve::server
