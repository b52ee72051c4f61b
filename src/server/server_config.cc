#include "server/server_config.h"

#include <CLI/CLI.hpp>
#include <map>

#include "core/error.h"
#include "core/yaml_schema.h"
#include "scheduler/worker_launcher.h"
#include "server/config_schema.h"
#include "server/models_folder.h"
#include "yaml-cpp/yaml.h"

namespace voxserve::server {
namespace {

using core::OptionSpec;
using core::OptionTable;

std::string ScalarOr(const YAML::Node& node, const std::string& fallback) {
  return node && node.IsScalar() ? node.Scalar() : fallback;
}

absl::Status ReadSchedulingInt(const YAML::Node& node, const std::string& where, const char* key,
                               int* out) {
  if (!node[key]) return absl::OkStatus();
  long long value = 0;
  absl::Status status = node[key].IsScalar()
                            ? core::ParseInt(node[key].Scalar(), 0, 1'000'000'000, &value)
                            : core::InvalidArgument("expected a number");
  if (!status.ok())
    return core::InvalidArgument(where + "." + key + ": " + std::string(status.message()));
  *out = static_cast<int>(value);
  return absl::OkStatus();
}

// espeak-ng speaks in processes of its own (a speaker per voice and caller, see
// engine/espeak/espeak_synth_process.h): its default is in-process instances, one per core
// (auto, ModelInfo::parallel_calls), with no worker process between a request and its speaker
// (issue 38: that hop cost more than the rest of serving). Other engines default to one
// in-process instance (ONNX Runtime's intra-op threads already use the cores).
void ApplyEngineDefaults(service::ModelConfig& model) {
  if (model.engine.engine == "espeak") {
    model.scheduling.isolation = scheduler::Isolation::kThread;
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
      // The range SchedulerConfig::Validate checks, said the same way (scheduler_config.h).
      long long value = 0;
      absl::Status status = instances.IsScalar() ? core::ParseInt(instances.Scalar(), 1,
                                                                  scheduler::kMaxInstances, &value)
                                                 : core::InvalidArgument("expected a number");
      if (!status.ok()) {
        return core::InvalidArgument(at + ".instances: " + std::string(status.message()) +
                                     " (or auto)");
      }
      s.instances = static_cast<int>(value);
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
  // cpus and devices place worker processes: listing them without an isolation asks for those.
  if (!scheduling["isolation"] && (!s.cpus.empty() || !s.devices.empty())) {
    s.isolation = scheduler::Isolation::kProcess;
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
    for (const SchedulingKey& key : SchedulingKeys()) {
      if (absl::Status status = ReadSchedulingInt(scheduling, at, key.name, &(s.*key.field));
          !status.ok()) {
        return status;
      }
    }
    if (absl::Status status = ReadWorkerKeys(scheduling, at, s); !status.ok()) return status;
  }
  if (const YAML::Node& lexicons = node["lexicons"]; lexicons && lexicons.IsSequence()) {
    for (const auto& path : lexicons) model.lexicons.push_back(ScalarOr(path, ""));
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
    for (const auto& entry : openai) {
      s.openai_voices[entry.first.Scalar()] = ScalarOr(entry.second, "");
      s.configured_openai_voices.insert(entry.first.Scalar());
    }
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
      "\nPer model (YAML models[]: id, engine, default_voice, options, scheduling, lexicons, "
      "warmup):\n"
      "  engine: espeak | piper | kokoro | cosyvoice | tone (diagnostic streaming engine, no "
      "model)\n"
      "  scheduling: instances, isolation, devices, cpus";
  size_t column = 48;  // where the list stands after "  scheduling: ... cpus"
  for (const SchedulingKey& key : SchedulingKeys()) {
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
      "    [--execution-provider cuda]  (their graphs on the GPU)\n"
      "    [--llm-precision fp16]       (the LLM step graph of that precision; default auto)\n"
      "\nEvery key with its type, default, bounds and meaning: docs/configuration.md, printed by\n"
      "  voxserve config-reference\n";
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
    flag_options[spec.flag] = app.add_option("--" + spec.flag, flag_values[spec.flag], spec.help)
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
  if (absl::Status status = config.wyoming.Validate(); !status.ok()) return status;
  if (absl::Status status = config.service.Validate(); !status.ok()) return status;
  if (absl::Status status = config.tls.Validate(); !status.ok()) return status;
  if (config.log_format != "text" && config.log_format != "json") {
    return core::InvalidArgument("log.format must be text or json");
  }
  return parsed;
}

}  // namespace voxserve::server
