#include "server/server_config.h"

#include <CLI/CLI.hpp>
#include <map>

#include "core/error.h"
#include "core/yaml_schema.h"
#include "scheduler/worker_launcher.h"
#include "server/models_folder.h"
#include "yaml-cpp/yaml.h"

namespace voxserve::server {
namespace {

using core::OptionSpec;
using core::OptionTable;

template <typename Int>
std::function<absl::Status(std::string_view)> IntSetter(Int* target, long long min, long long max) {
  return [target, min, max](std::string_view text) {
    long long value = 0;
    if (absl::Status status = core::ParseInt(text, min, max, &value); !status.ok()) return status;
    *target = static_cast<Int>(value);
    return absl::OkStatus();
  };
}

std::function<absl::Status(std::string_view)> StringSetter(std::string* target) {
  return [target](std::string_view text) {
    *target = std::string(text);
    return absl::OkStatus();
  };
}

std::function<absl::Status(std::string_view)> BoolSetter(bool* target) {
  return [target](std::string_view text) { return core::ParseBool(text, target); };
}

using AddOption = std::function<void(std::string key, std::string flag, std::string help,
                                      std::string fallback,
                                      std::function<absl::Status(std::string_view)> set)>;

// TLS and API keys (transport/tls, transport/auth), shared by every listener.
void AddSecurityOptions(ServerConfig& c, const AddOption& add) {
  transport::tls::TlsConfig& t = c.tls;
  add("tls.cert_file", "tls-cert-file",
      "PEM certificate chain; with tls.key_file the port serves HTTPS", "",
      StringSetter(&t.cert_file));
  add("tls.key_file", "tls-key-file", "PEM private key of the certificate", "",
      StringSetter(&t.key_file));
  add("tls.client_ca_file", "tls-client-ca-file",
      "PEM CA bundle that client certificates must chain to", "", StringSetter(&t.client_ca_file));
  add("tls.client_auth", "tls-client-auth", "client certificates: none, optional or require",
      "none", [&t](std::string_view text) -> absl::Status {
        auto mode = transport::tls::ParseClientAuth(text);
        if (!mode.ok()) return mode.status();
        t.client_auth = *mode;
        return absl::OkStatus();
      });
  add("auth.keys_file", "api-keys-file",
      "YAML file of API keys, reloaded on SIGHUP; unset = no auth", "",
      StringSetter(&c.auth.keys_file));
  add("auth.protect_health", "protect-health", "require an API key for /health*", "false",
      BoolSetter(&c.auth.protect_health));
  add("auth.protect_metrics", "protect-metrics", "require an API key for /metrics", "false",
      BoolSetter(&c.auth.protect_metrics));
}

// The scalar options, declared once for all three sources.
OptionTable BuildOptionTable(ServerConfig& c) {
  OptionTable table;
  auto add = [&](std::string key, std::string flag, std::string help, std::string fallback,
                 std::function<absl::Status(std::string_view)> set) {
    table.Add({std::move(key), std::move(flag), std::move(help), std::move(fallback),
               std::move(set)});
  };
  transport::http::HttpConfig& h = c.http;
  service::ServiceConfig& s = c.service;
  add("http.host", "host", "address to listen on", h.host, StringSetter(&h.host));
  add("http.port", "port", "port to listen on, 0..65535 (0 = any free port)",
      std::to_string(h.port), IntSetter(&h.port, 0, 65535));
  add("http.io_threads", "io-threads", "HTTP I/O threads, 0 = one per core",
      std::to_string(h.io_threads), IntSetter(&h.io_threads, 0, 1024));
  add("http.max_body_bytes", "max-body-bytes", "largest request body accepted (413 above)",
      std::to_string(h.max_body_bytes), IntSetter(&h.max_body_bytes, 1024, 1LL << 30));
  add("http.max_header_bytes", "max-header-bytes", "largest request header block (431 above)",
      std::to_string(h.max_header_bytes), IntSetter(&h.max_header_bytes, 1024, 1 << 20));
  add("http.header_timeout_ms", "header-timeout-ms", "time allowed to send the request headers",
      std::to_string(h.header_timeout_ms), IntSetter(&h.header_timeout_ms, 1, 3'600'000));
  add("http.body_timeout_ms", "body-timeout-ms", "time allowed to send the request body",
      std::to_string(h.body_timeout_ms), IntSetter(&h.body_timeout_ms, 1, 3'600'000));
  add("http.idle_timeout_ms", "idle-timeout-ms", "keep-alive connection idle time before closing",
      std::to_string(h.idle_timeout_ms), IntSetter(&h.idle_timeout_ms, 1, 3'600'000));
  add("http.write_timeout_ms", "write-timeout-ms",
      "time a client may take to accept one write before it is cut off",
      std::to_string(h.write_timeout_ms), IntSetter(&h.write_timeout_ms, 1, 3'600'000));
  add("http.max_connections", "max-connections", "open connections before new ones are refused",
      std::to_string(h.max_connections), IntSetter(&h.max_connections, 1, 1'000'000));
  add("http.playground", "playground",
      "serve the web playground at / (true or false); its files need no API key",
      h.playground ? "true" : "false", BoolSetter(&h.playground));
  transport::grpc::GrpcConfig& g = c.grpc;
  add("grpc.enabled", "grpc-enabled", "serve the gRPC API (true or false)",
      g.enabled ? "true" : "false",
      [&g](std::string_view text) { return core::ParseBool(text, &g.enabled); });
  add("grpc.host", "grpc-host", "address gRPC listens on; empty = http.host", g.host,
      StringSetter(&g.host));
  add("grpc.port", "grpc-port", "gRPC port, 0..65535 (0 = any free port)", std::to_string(g.port),
      IntSetter(&g.port, 0, 65535));
  add("grpc.max_message_bytes", "grpc-max-message-bytes",
      "largest gRPC request message accepted (RESOURCE_EXHAUSTED above)",
      std::to_string(g.max_message_bytes), IntSetter(&g.max_message_bytes, 1024, 1LL << 30));
  add("grpc.reflection", "grpc-reflection", "serve gRPC server reflection (true or false)",
      g.reflection ? "true" : "false",
      [&g](std::string_view text) { return core::ParseBool(text, &g.reflection); });
  transport::websocket::WebSocketConfig& w = c.websocket;
  add("websocket.max_message_bytes", "ws-max-message-bytes",
      "largest WebSocket message a client may send (close code 1009 above)",
      std::to_string(w.max_message_bytes), IntSetter(&w.max_message_bytes, 1024, 64LL << 20));
  add("websocket.ping_interval_ms", "ws-ping-interval-ms",
      "WebSocket ping after this long without a frame; twice as long silent = dropped",
      std::to_string(w.ping_interval_ms), IntSetter(&w.ping_interval_ms, 100, 3'600'000));
  add("websocket.idle_timeout_ms", "ws-idle-timeout-ms",
      "WebSocket with no message and nothing to synthesize this long is closed (1008)",
      std::to_string(w.idle_timeout_ms), IntSetter(&w.idle_timeout_ms, 1, 86'400'000));
  add("default_model", "default-model", "model used when a request names none or an OpenAI model",
      "first model", StringSetter(&s.default_model));
  add("limits.max_input_chars", "max-input-chars", "longest input text in characters (413 above)",
      std::to_string(s.limits.max_input_chars),
      IntSetter(&s.limits.max_input_chars, 1, 1'000'000));
  add("limits.request_timeout_ms", "request-timeout-ms",
      "deadline of a request that names none", std::to_string(s.default_timeout_ms),
      IntSetter(&s.default_timeout_ms, 1, 86'400'000));
  add("limits.max_request_timeout_ms", "max-request-timeout-ms",
      "longest deadline a request may ask for", std::to_string(s.max_timeout_ms),
      IntSetter(&s.max_timeout_ms, 1, 86'400'000));
  add("limits.max_segment_chars", "max-segment-chars",
      "longest segment sent to an engine; longer sentences are cut at clause boundaries",
      std::to_string(s.max_segment_chars), IntSetter(&s.max_segment_chars, 16, 100'000));
  add("limits.stream_buffer_bytes", "stream-buffer-bytes",
      "encoded audio a slow streaming client may hold back before its request pauses",
      std::to_string(s.stream_buffer_bytes), IntSetter(&s.stream_buffer_bytes, 1024, 1LL << 30));
  add("service.pipeline_depth", "pipeline-depth",
      "segments of one request queued at once (2 overlaps encoding with synthesis)",
      std::to_string(s.pipeline_depth), IntSetter(&s.pipeline_depth, 1, 64));
  add("service.encode_threads", "encode-threads", "threads that resample and encode, 0 = cores",
      std::to_string(s.encode_threads), IntSetter(&s.encode_threads, 0, 1024));
  add("models_dir", "models", "folder scanned for Piper voices and Kokoro models", "",
      StringSetter(&c.models_dir));
  add("skip_broken_models", "skip-broken-models",
      "true: a model that fails to load is skipped with a warning instead of keeping the "
      "server not ready",
      "false", [target = &s.skip_broken_models](std::string_view text) {
        return core::ParseBool(text, target);
      });
  add("log.level", "log-level", "trace, debug, info, warn, error or off", c.log_level,
      StringSetter(&c.log_level));
  add("log.format", "log-format", "text or json", c.log_format, StringSetter(&c.log_format));
  add("drain_timeout_ms", "drain-timeout-ms",
      "on SIGTERM, how long in-flight requests may run before exit",
      std::to_string(c.drain_timeout_ms), IntSetter(&c.drain_timeout_ms, 0, 3'600'000));
  service::VoiceStoreConfig& v = s.voices;
  add("voices.dir", "voices-dir",
      "directory of cloned voices (POST /v1/audio/voices); unset = voice cloning off", "",
      StringSetter(&v.dir));
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
      "TEST ONLY: serve POST /testing/faults, which makes requests fail, wait or drop",
      "false", BoolSetter(&c.fault_injection));
  return table;
}

std::string ScalarOr(const YAML::Node& node, const std::string& fallback) {
  return node && node.IsScalar() ? node.Scalar() : fallback;
}

// models[].scheduling integer keys: the reader and the file schema both use this table, so a new
// integer key is one line here. `instances` (a number or auto) and the worker-placement keys are
// read by ReadWorkerKeys.
struct SchedulingKey {
  const char* name;
  int scheduler::SchedulerConfig::*field;
};
constexpr SchedulingKey kSchedulingKeys[] = {
    {"max_batch_size", &scheduler::SchedulerConfig::max_batch_size},
    {"max_active", &scheduler::SchedulerConfig::max_active},
    {"max_queue_delay_ms", &scheduler::SchedulerConfig::max_queue_delay_ms},
    {"queue_capacity", &scheduler::SchedulerConfig::queue_capacity},
    {"first_segment_lead_ms", &scheduler::SchedulerConfig::first_segment_lead_ms},
    {"batch_timeout_ms", &scheduler::SchedulerConfig::batch_timeout_ms},
    {"heartbeat_ms", &scheduler::SchedulerConfig::heartbeat_ms},
    {"startup_timeout_ms", &scheduler::SchedulerConfig::startup_timeout_ms},
};

absl::Status ReadSchedulingInt(const YAML::Node& node, const std::string& where, const char* key,
                               int* out) {
  if (!node[key]) return absl::OkStatus();
  long long value = 0;
  absl::Status status = node[key].IsScalar()
                            ? core::ParseInt(node[key].Scalar(), 0, 1'000'000'000, &value)
                            : core::InvalidArgument("expected a number");
  if (!status.ok()) return core::InvalidArgument(where + "." + key + ": " + std::string(status.message()));
  *out = static_cast<int>(value);
  return absl::OkStatus();
}

// Every key the file may hold, checked before any value is read (core/yaml_schema.h): the scalar
// options come from the option table, the structured sections are listed here. Unknown keys are
// errors, not warnings: a misspelled limit must not start a server without it.
core::YamlSchema ConfigFileSchema(const OptionTable& table) {
  using core::YamlSchema;
  YamlSchema scheduling = YamlSchema::Fields();
  for (const SchedulingKey& key : kSchedulingKeys) scheduling.Field(key.name, YamlSchema::Scalar());
  scheduling.Field("instances", YamlSchema::Scalar())
      .Field("isolation", YamlSchema::Scalar())
      .Field("devices", YamlSchema::ScalarOrListOf(YamlSchema::Scalar()))
      .Field("cpus", YamlSchema::ScalarOrListOf(YamlSchema::Scalar()));
  YamlSchema schema = YamlSchema::Fields();
  for (const OptionSpec& spec : table.specs()) schema.Field(spec.yaml_key, YamlSchema::Scalar());
  schema.Field("models",
               YamlSchema::ListOf(YamlSchema::Fields()
                                      .Field("id", YamlSchema::Scalar())
                                      .Field("engine", YamlSchema::Scalar())
                                      .Field("default_voice", YamlSchema::Scalar())
                                      // Engine-specific; each engine names its unknown options.
                                      .Field("options", YamlSchema::MapOf(YamlSchema::Scalar()))
                                      .Field("scheduling", std::move(scheduling))
                                      .Field("warmup", YamlSchema::ListOf(YamlSchema::Scalar()))));
  schema.Field(
      "voice_aliases",
      YamlSchema::MapOf(YamlSchema::ScalarOrFields(YamlSchema::Fields()
                                                       .Field("model", YamlSchema::Scalar())
                                                       .Field("voice", YamlSchema::Scalar()))));
  schema.Field("openai_voices", YamlSchema::MapOf(YamlSchema::Scalar()));
  return schema;
}

// espeak-ng keeps global state, so one process runs one synthesis at a time: its default is a
// worker process per core (every core used with no configuration). Other engines default to
// one in-process instance (ONNX Runtime's intra-op threads already use the cores).
void ApplyEngineDefaults(service::ModelConfig& model) {
  if (model.engine.engine == "espeak") {
    model.scheduling.isolation = scheduler::Isolation::kProcess;
    model.scheduling.instances = scheduler::kInstancesAuto;
  }
}

absl::StatusOr<std::vector<std::string>> ReadScalarList(const YAML::Node& node,
                                                        const std::string& where) {
  std::vector<std::string> values;
  if (node.IsScalar()) {
    values.push_back(node.Scalar());
  } else if (node.IsSequence()) {
    for (const auto& item : node) {
      if (!item.IsScalar()) return core::InvalidArgument(where + ": expected a list of scalars");
      values.push_back(item.Scalar());
    }
  } else {
    return core::InvalidArgument(where + ": expected a scalar or a list");
  }
  return values;
}

// scheduling.instances (a number or auto), .isolation, .devices, .cpus (issue 11).
absl::Status ReadWorkerKeys(const YAML::Node& scheduling, const std::string& at,
                            scheduler::SchedulerConfig& s) {
  if (const YAML::Node& instances = scheduling["instances"]) {
    if (instances.IsScalar() && instances.Scalar() == "auto") {
      s.instances = scheduler::kInstancesAuto;
    } else {
      absl::Status status = ReadSchedulingInt(scheduling, at, "instances", &s.instances);
      if (status.ok() && s.instances == scheduler::kInstancesAuto) {
        status = core::InvalidArgument(at + ".instances: 0 is not allowed");
      }
      if (!status.ok()) {
        return core::InvalidArgument(std::string(status.message()) + " (1..256 or auto)");
      }
    }
  }
  if (const YAML::Node& isolation = scheduling["isolation"]) {
    std::string value = ScalarOr(isolation, "");
    if (value == "process") {
      s.isolation = scheduler::Isolation::kProcess;
    } else if (value == "thread") {
      s.isolation = scheduler::Isolation::kThread;
    } else {
      return core::InvalidArgument(at + ".isolation: \"" + value +
                                   "\" is not one of thread, process");
    }
  }
  if (const YAML::Node& devices = scheduling["devices"]) {
    auto listed = ReadScalarList(devices, at + ".devices");
    if (!listed.ok()) return listed.status();
    s.devices = *listed;
  }
  if (const YAML::Node& cpus = scheduling["cpus"]) {
    auto listed = ReadScalarList(cpus, at + ".cpus");
    if (!listed.ok()) return listed.status();
    for (const std::string& list : *listed) {
      if (auto parsed = scheduler::ParseCpuList(list); !parsed.ok()) {
        return core::InvalidArgument(at + ".cpus: " + std::string(parsed.status().message()));
      }
    }
    s.cpus = *listed;
  }
  return absl::OkStatus();
}

// Only called on nodes that passed ConfigFileSchema, so every value has the expected shape.
absl::StatusOr<service::ModelConfig> ReadModel(const YAML::Node& node, size_t index) {
  std::string where = "models[" + std::to_string(index) + "]";
  if (!node.IsMap()) return core::InvalidArgument(where + ": expected a mapping");
  service::ModelConfig model;
  model.engine.model_id = ScalarOr(node["id"], "");
  model.engine.engine = ScalarOr(node["engine"], "espeak");
  model.engine.default_voice = ScalarOr(node["default_voice"], "");
  if (model.engine.model_id.empty()) return core::InvalidArgument(where + ".id is required");
  ApplyEngineDefaults(model);
  if (const YAML::Node& options = node["options"]; options && options.IsMap()) {
    for (const auto& entry : options) {
      model.engine.options[entry.first.Scalar()] = ScalarOr(entry.second, "");
    }
  }
  if (const YAML::Node& scheduling = node["scheduling"]; scheduling && scheduling.IsMap()) {
    std::string at = where + ".scheduling";
    scheduler::SchedulerConfig& s = model.scheduling;
    for (const SchedulingKey& key : kSchedulingKeys) {
      if (absl::Status status = ReadSchedulingInt(scheduling, at, key.name, &(s.*key.field));
          !status.ok()) {
        return status;
      }
    }
    if (absl::Status status = ReadWorkerKeys(scheduling, at, s); !status.ok()) return status;
  }
  if (const YAML::Node& warmup = node["warmup"]; warmup && warmup.IsSequence()) {
    model.warmup.clear();
    for (const auto& text : warmup) model.warmup.push_back(ScalarOr(text, ""));
  }
  return model;
}

// The structured parts of the file: models, voice aliases, OpenAI voice names.
absl::Status ApplyStructuredYaml(const YAML::Node& root, ServerConfig& config) {
  service::ServiceConfig& s = config.service;
  // The schema has checked the shapes; a null section (`models:` alone) means "not set". A
  // missing key reads as an invalid node, which must be tested (operator bool) before IsMap().
  if (const YAML::Node& models = root["models"]; models && models.IsSequence()) {
    s.models.clear();
    for (size_t i = 0; i < models.size(); ++i) {
      auto model = ReadModel(models[i], i);
      if (!model.ok()) return model.status();
      s.models.push_back(std::move(*model));
    }
  }
  if (const YAML::Node& aliases = root["voice_aliases"]; aliases && aliases.IsMap()) {
    for (const auto& entry : aliases) {
      service::VoiceAlias alias;
      if (entry.second.IsMap()) {
        alias.model = ScalarOr(entry.second["model"], "");
        alias.voice = ScalarOr(entry.second["voice"], "");
      } else {
        alias.voice = ScalarOr(entry.second, "");
      }
      s.voice_aliases[entry.first.Scalar()] = alias;
    }
  }
  if (const YAML::Node& openai = root["openai_voices"]; openai && openai.IsMap()) {
    for (const auto& entry : openai) s.openai_voices[entry.first.Scalar()] = ScalarOr(entry.second, "");
  }
  return absl::OkStatus();
}

ServerConfig Defaults() {
  ServerConfig config;
  service::ModelConfig espeak;
  espeak.engine.model_id = "espeak";
  espeak.engine.engine = "espeak";
  ApplyEngineDefaults(espeak);
  config.service.models.push_back(espeak);
  config.service.openai_voices = service::DefaultOpenAiVoicesForEspeak();
  return config;
}

// The one place yaml-cpp is called for the config file: whatever it throws (a syntax error, a
// conversion it cannot make) becomes an error naming the file and, where yaml-cpp knows it, the
// line. Nothing yaml-cpp throws gets out of config loading.
absl::Status ApplyConfigFile(const std::string& path, const OptionTable& table,
                             ServerConfig& config) {
  auto in_file = [&](const absl::Status& status) {
    return core::InvalidArgument(path + ": " + std::string(status.message()));
  };
  try {
    YAML::Node root = YAML::LoadFile(path);
    if (root.IsNull()) return absl::OkStatus();
    if (!root.IsMap()) return core::InvalidArgument(path + ": expected a YAML mapping");
    if (absl::Status status = ConfigFileSchema(table).Check(root); !status.ok()) {
      return in_file(status);
    }
    // Structured settings are rebuilt on every Apply; scalars go through the table.
    if (absl::Status status = ApplyStructuredYaml(root, config); !status.ok()) {
      return in_file(status);
    }
    if (absl::Status status = table.ApplyYaml(root); !status.ok()) return in_file(status);
  } catch (const YAML::BadFile&) {
    return core::InvalidArgument("cannot read config file " + path);
  } catch (const YAML::Exception& error) {
    std::string where =
        error.mark.is_null() ? "" : " at line " + std::to_string(error.mark.line + 1);
    return core::InvalidArgument("config file " + path + where + ": " + error.msg);
  } catch (const std::exception& error) {
    return core::InvalidArgument("config file " + path + ": " + error.what());
  }
  return absl::OkStatus();
}

std::string HelpFooter(const OptionTable& table) {
  std::string text =
      "\nEvery option can also be set in the YAML file (--config) under its key, or in the\n"
      "environment; precedence is file < environment < flag.\n\n  flag                     "
      "environment variable            YAML key\n";
  for (const OptionSpec& spec : table.specs()) {
    char line[160];
    std::snprintf(line, sizeof line, "  --%-22s %-31s %s\n", spec.flag.c_str(),
                  OptionTable::EnvName(spec.flag).c_str(), spec.yaml_key.c_str());
    text += line;
  }
  text += "  --config                 VOXSERVE_CONFIG\n";
  // Per-model keys live in the file only (config/voxserve.example.yaml, docs/engines.md).
  text +=
      "\nPer model (YAML models[]: id, engine, default_voice, options, scheduling, warmup):\n"
      "  engine: espeak | piper | kokoro | cosyvoice | tone (diagnostic streaming engine, no model)\n"
      "  scheduling: instances, isolation, devices, cpus";
  size_t column = 48;  // where the list stands after "  scheduling: ... cpus"
  for (const SchedulingKey& key : kSchedulingKeys) {
    std::string item = std::string(", ") + key.name;
    if (column + item.size() > 96) {  // keep --help within a 100-column terminal
      text += ",\n   ";
      item.erase(0, 1);
      column = 3;
    }
    text += item;
    column += item.size();
  }
  text +=
      "\n  (max_batch_size: whole-segment engines' batch; max_active: streaming engines'\n"
      "  segments advanced per step, 1..1024, default 8)\n";
  text +=
      "\nModel tools (server/model_commands.h, docs/cosyvoice-bundle.md):\n"
      "  voxserve check-model DIR     validate a CosyVoice bundle against its manifest\n"
      "  voxserve verify-bundle DIR   run the C++ stages on its goldens, max error per stage\n"
      "    [--execution-provider cuda]  (their graphs on the GPU)\n";
  return text;
}

}  // namespace

absl::StatusOr<ParsedCommandLine> LoadServerConfig(int argc, const char* const* argv,
                                                   const core::EnvLookup& env) {
  ParsedCommandLine parsed;
  parsed.config = Defaults();
  ServerConfig& config = parsed.config;
  OptionTable table = BuildOptionTable(config);

  CLI::App app{"voxserve: text-to-speech server (OpenAI-compatible REST, streaming)", "voxserve"};
  std::map<std::string, std::string> flag_values;
  std::map<std::string, CLI::Option*> flag_options;
  for (const OptionSpec& spec : table.specs()) {
    flag_options[spec.flag] =
        app.add_option("--" + spec.flag, flag_values[spec.flag], spec.help)
            ->default_str(spec.default_value);
  }
  std::string config_path;
  app.add_option("--config", config_path, "YAML configuration file");
  bool version = false;
  app.add_flag("--version", version, "print the version and exit");
  app.footer(HelpFooter(table));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    parsed.exit_now = true;
    parsed.message = app.help();
    return parsed;
  } catch (const CLI::ParseError& error) {
    return core::InvalidArgument(std::string(error.what()) + " (see voxserve --help)");
  }
  if (version) {
    parsed.exit_now = true;
    parsed.message = std::string("voxserve ") + VOXSERVE_VERSION + "\n";
    return parsed;
  }

  if (config_path.empty()) config_path = env("VOXSERVE_CONFIG").value_or("");
  if (!config_path.empty()) {
    if (absl::Status status = ApplyConfigFile(config_path, table, config); !status.ok()) {
      return status;
    }
    config.config_path = config_path;
  }
  if (absl::Status status = table.ApplyEnv(env); !status.ok()) return status;
  std::map<std::string, std::string> given;
  for (const auto& [flag, option] : flag_options) {
    if (option->count() > 0) given[flag] = flag_values[flag];
  }
  if (absl::Status status = table.ApplyFlags(given); !status.ok()) return status;

  if (absl::Status status = AddModelsFromFolder(config); !status.ok()) return status;
  // TEST ONLY: worker processes obey fault texts exactly when the server injects faults.
  for (service::ModelConfig& model : config.service.models) {
    model.scheduling.worker_test_faults = config.fault_injection;
  }
  if (absl::Status status = config.http.Validate(); !status.ok()) return status;
  if (absl::Status status = config.grpc.Validate(); !status.ok()) return status;
  if (absl::Status status = config.websocket.Validate(); !status.ok()) return status;
  if (absl::Status status = config.service.Validate(); !status.ok()) return status;
  if (absl::Status status = config.tls.Validate(); !status.ok()) return status;
  if (config.log_format != "text" && config.log_format != "json") {
    return core::InvalidArgument("log.format must be text or json");
  }
  return parsed;
}

}  // namespace voxserve::server
