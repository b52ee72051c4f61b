#include "server/server_config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "support/test_paths.h"

namespace voxserve::server {
namespace {

class ServerConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("voxserve-config-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".yaml");
  }
  void TearDown() override { std::filesystem::remove(path_); }

  void WriteConfig(const std::string& yaml) { std::ofstream(path_) << yaml; }

  absl::StatusOr<ParsedCommandLine> Load(std::vector<std::string> args,
                                         std::map<std::string, std::string> env = {}) {
    std::vector<const char*> argv = {"voxserve"};
    for (const std::string& arg : args) argv.push_back(arg.c_str());
    return LoadServerConfig(static_cast<int>(argv.size()), argv.data(),
                            [env](const std::string& name) -> std::optional<std::string> {
                              auto it = env.find(name);
                              if (it == env.end()) return std::nullopt;
                              return it->second;
                            });
  }

  std::filesystem::path path_;
};

TEST_F(ServerConfigTest, DefaultsServeEspeakOnLoopback8080) {
  auto parsed = Load({});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->config.http.host, "127.0.0.1");
  EXPECT_EQ(parsed->config.http.port, 8080);
  ASSERT_EQ(parsed->config.service.models.size(), 1u);
  EXPECT_EQ(parsed->config.service.models[0].engine.engine, "espeak");
  EXPECT_EQ(parsed->config.service.openai_voices.size(), 13u);
}

TEST_F(ServerConfigTest, FileThenEnvironmentThenFlagEachOverrideTheOneBefore) {
  WriteConfig("http:\n  port: 1111\n  io_threads: 3\nlimits:\n  max_input_chars: 100\n");
  auto file_only = Load({"--config", path_.string()});
  ASSERT_TRUE(file_only.ok()) << file_only.status();
  EXPECT_EQ(file_only->config.http.port, 1111);
  EXPECT_EQ(file_only->config.http.io_threads, 3);

  auto with_env = Load({"--config", path_.string()}, {{"VOXSERVE_PORT", "2222"}});
  ASSERT_TRUE(with_env.ok()) << with_env.status();
  EXPECT_EQ(with_env->config.http.port, 2222);
  EXPECT_EQ(with_env->config.http.io_threads, 3);  // untouched by env

  auto with_flag =
      Load({"--config", path_.string(), "--port", "3333"}, {{"VOXSERVE_PORT", "2222"}});
  ASSERT_TRUE(with_flag.ok()) << with_flag.status();
  EXPECT_EQ(with_flag->config.http.port, 3333);
  EXPECT_EQ(with_flag->config.service.limits.max_input_chars, 100u);
}

TEST_F(ServerConfigTest, ConfigPathMayComeFromTheEnvironment) {
  WriteConfig("http:\n  port: 4444\n");
  auto parsed = Load({}, {{"VOXSERVE_CONFIG", path_.string()}});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->config.http.port, 4444);
}

TEST_F(ServerConfigTest, ReadsModelsAliasesAndOpenAiVoices) {
  WriteConfig(R"(
default_model: speech
models:
  - id: speech
    engine: espeak
    default_voice: en-gb
    scheduling: {instances: 2, max_batch_size: 4, max_queue_delay_ms: 30, queue_capacity: 10}
    warmup: ["Hi.", "Ready."]
voice_aliases:
  zh_female: cmn+f3
  narrator: {model: speech, voice: en-gb+m3}
openai_voices:
  alloy: en-gb+f1
)");
  auto parsed = Load({"--config", path_.string()});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const service::ServiceConfig& service = parsed->config.service;
  ASSERT_EQ(service.models.size(), 1u);
  EXPECT_EQ(service.default_model, "speech");
  EXPECT_EQ(service.models[0].engine.default_voice, "en-gb");
  EXPECT_EQ(service.models[0].scheduling.instances, 2);
  EXPECT_EQ(service.models[0].scheduling.max_batch_size, 4);
  EXPECT_EQ(service.models[0].scheduling.max_queue_delay_ms, 30);
  EXPECT_EQ(service.models[0].scheduling.queue_capacity, 10);
  EXPECT_EQ(service.models[0].warmup, (std::vector<std::string>{"Hi.", "Ready."}));
  EXPECT_EQ(service.voice_aliases.at("zh_female").voice, "cmn+f3");
  EXPECT_EQ(service.voice_aliases.at("zh_female").model, "");
  EXPECT_EQ(service.voice_aliases.at("narrator").model, "speech");
  EXPECT_EQ(service.openai_voices.at("alloy"), "en-gb+f1");
  EXPECT_EQ(service.openai_voices.at("echo"), "en-us+m3");  // defaults kept where not overridden
}

TEST_F(ServerConfigTest, BadValuesNameTheirSourceAndRange) {
  auto flag = Load({"--port", "70000"});
  ASSERT_FALSE(flag.ok());
  EXPECT_NE(std::string(flag.status().message()).find("--port"), std::string::npos);
  EXPECT_NE(std::string(flag.status().message()).find("0..65535"), std::string::npos);

  auto env = Load({}, {{"VOXSERVE_MAX_INPUT_CHARS", "lots"}});
  ASSERT_FALSE(env.ok());
  EXPECT_NE(std::string(env.status().message()).find("VOXSERVE_MAX_INPUT_CHARS"),
            std::string::npos);

  WriteConfig("http:\n  port: [1, 2]\n");
  auto file = Load({"--config", path_.string()});
  ASSERT_FALSE(file.ok());
  EXPECT_NE(std::string(file.status().message()).find("http.port"), std::string::npos);
}

TEST_F(ServerConfigTest, ReadsAStreamingModelAndItsMaxActive) {
  WriteConfig(R"(
default_model: tone
models:
  - id: tone
    engine: tone
    options: {step_ms: 5}
    scheduling: {max_active: 12}
)");
  auto parsed = Load({"--config", path_.string()});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const service::ModelConfig& model = parsed->config.service.models[0];
  EXPECT_EQ(model.engine.engine, "tone");
  EXPECT_EQ(model.scheduling.max_active, 12);
  EXPECT_EQ(model.engine.options.at("step_ms"), "5");

  WriteConfig("models:\n  - id: tone\n    engine: tone\n    scheduling: {max_active: 0}\n");
  auto bad = Load({"--config", path_.string()});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("max_active = 0 is outside 1..1024"),
            std::string::npos)
      << bad.status();
}

// espeak-ng speaks in its own processes: in-process instances, auto (one per core, ModelHost),
// with no worker process on the request path (issue 38).
TEST_F(ServerConfigTest, EspeakDefaultsToInProcessInstancesOnePerCore) {
  auto parsed = Load({});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const scheduler::SchedulerConfig& s = parsed->config.service.models[0].scheduling;
  EXPECT_EQ(s.isolation, scheduler::Isolation::kThread);
  EXPECT_EQ(s.instances, scheduler::kInstancesAuto);
  EXPECT_FALSE(s.worker_test_faults);
}

TEST_F(ServerConfigTest, WorkerKeysAreRead) {
  WriteConfig(
      "models:\n  - id: e\n    engine: espeak\n    scheduling:\n      isolation: thread\n"
      "      instances: 3\n  - id: w\n    engine: espeak\n    scheduling:\n"
      "      instances: auto\n      cpus: [\"0\", \"1-1\"]\n      batch_timeout_ms: 500\n"
      "      heartbeat_ms: 50\n");
  auto parsed = Load({"--config", path_.string(), "--fault-injection", "true"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const auto& models = parsed->config.service.models;
  EXPECT_EQ(models[0].scheduling.isolation, scheduler::Isolation::kThread);
  EXPECT_EQ(models[0].scheduling.instances, 3);
  EXPECT_EQ(models[1].scheduling.isolation, scheduler::Isolation::kProcess);
  EXPECT_EQ(models[1].scheduling.cpus, (std::vector<std::string>{"0", "1-1"}));
  EXPECT_EQ(models[1].scheduling.batch_timeout_ms, 500);
  EXPECT_EQ(models[1].scheduling.heartbeat_ms, 50);
  EXPECT_TRUE(models[1].scheduling.worker_test_faults);  // from --fault-injection only
}

TEST_F(ServerConfigTest, BadWorkerKeysNameTheKey) {
  for (auto [yaml, expected] : {
           std::pair{"isolation: fork", "isolation: \"fork\" is not one of thread, process"},
           {"cpus: \"2-1\"", "scheduling.cpus: cpu list \"2-1\": bad range"},
           {"cpus: \"x\"", "is not a CPU or a range"},
           {"{isolation: thread, cpus: \"0\"}", "devices and cpus need isolation: process"},
           {"{devices: [0, 1], instances: 3}", "2 devices are listed"},
           {"instances: many", "scheduling.instances: 'many' is not an integer (or auto)"},
           // One range, said once: the reader's is the scheduler's (issue 29).
           {"instances: 0", "scheduling.instances: 0 is outside 1..256 (or auto)"},
           {"instances: 300", "scheduling.instances: 300 is outside 1..256 (or auto)"},
           {"instances: 99999999999",
            "scheduling.instances: 99999999999 is outside 1..256 (or auto)"},
       }) {
    std::string body = std::string(yaml);
    WriteConfig(body.front() == '{' ? "models:\n  - id: e\n    scheduling: " + body + "\n"
                                    : "models:\n  - id: e\n    scheduling:\n      " + body + "\n");
    auto parsed = Load({"--config", path_.string()});
    ASSERT_FALSE(parsed.ok()) << yaml;
    EXPECT_NE(std::string(parsed.status().message()).find(expected), std::string::npos)
        << parsed.status().message();
  }
}

TEST_F(ServerConfigTest, InvalidSchedulingAndUnknownDefaultModelAreRejected) {
  WriteConfig("models:\n  - id: e\n    scheduling: {instances: 0}\n");
  auto instances = Load({"--config", path_.string()});
  ASSERT_FALSE(instances.ok());
  EXPECT_NE(std::string(instances.status().message()).find("instances"), std::string::npos);

  auto model = Load({"--default-model", "missing"});
  ASSERT_FALSE(model.ok());
  EXPECT_NE(std::string(model.status().message()).find("missing"), std::string::npos);
}

TEST_F(ServerConfigTest, MissingOrMalformedFileIsAnError) {
  EXPECT_FALSE(Load({"--config", "/nonexistent/voxserve.yaml"}).ok());
  WriteConfig("http: [unclosed\n");
  EXPECT_FALSE(Load({"--config", path_.string()}).ok());
}

TEST_F(ServerConfigTest, AMisspelledKeyIsAnErrorNamingItsPathAndTheLikelyKey) {
  WriteConfig("models:\n  - id: e\n    scheduling:\n      max_batch_sise: 4\n");
  auto nested = Load({"--config", path_.string()});
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(std::string(nested.status().message()),
            path_.string() +
                ": models[0].scheduling.max_batch_sise: unknown key (did you mean "
                "max_batch_size?) (line 4)");

  WriteConfig("htp:\n  port: 9000\n");
  auto top = Load({"--config", path_.string()});
  ASSERT_FALSE(top.ok());
  EXPECT_NE(std::string(top.status().message()).find("htp: unknown key (did you mean http?)"),
            std::string::npos)
      << top.status();

  WriteConfig("limits:\n  max_input_char: 10\n");
  auto scalar = Load({"--config", path_.string()});
  ASSERT_FALSE(scalar.ok());
  EXPECT_NE(std::string(scalar.status().message())
                .find("limits.max_input_char: unknown key (did you mean max_input_chars?)"),
            std::string::npos)
      << scalar.status();
}

TEST_F(ServerConfigTest, AWrongTypedSectionIsAnErrorNotAnException) {
  for (const auto& [yaml, expected] : std::vector<std::pair<std::string, std::string>>{
           {"models:\n  - id: e\n    scheduling: 4\n",
            "models[0].scheduling: expected a mapping, got a single value (line 3)"},
           {"http: 8080\n", "http: expected a mapping, got a single value (line 1)"},
           {"models: {id: e}\n", "models: expected a list, got a mapping"},
           {"voice_aliases: [a, b]\n", "voice_aliases: expected a mapping, got a list"},
           {"models:\n  - id: e\n    warmup: Hello.\n",
            "models[0].warmup: expected a list, got a single value"},
           {"models:\n  - id: [e]\n", "models[0].id: expected a single value, got a list"},
       }) {
    WriteConfig(yaml);
    absl::StatusOr<ParsedCommandLine> parsed;
    ASSERT_NO_THROW(parsed = Load({"--config", path_.string()})) << yaml;
    ASSERT_FALSE(parsed.ok()) << yaml;
    EXPECT_NE(std::string(parsed.status().message()).find(expected), std::string::npos)
        << parsed.status();
  }
}

TEST_F(ServerConfigTest, ExtensionKeysAndEmptySectionsAreAccepted) {
  WriteConfig(
      "x-common: &common {max_batch_size: 2}\nhttp:\nmodels:\n"
      "  - id: e\n    scheduling: *common\n");
  auto parsed = Load({"--config", path_.string()});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->config.service.models[0].scheduling.max_batch_size, 2);
}

TEST_F(ServerConfigTest, ASyntaxErrorNamesTheFileAndLine) {
  WriteConfig("http:\n  port: 80\n  host: [unclosed\n");
  absl::StatusOr<ParsedCommandLine> parsed;
  ASSERT_NO_THROW(parsed = Load({"--config", path_.string()}));
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(std::string(parsed.status().message()).find(path_.string() + " at line"),
            std::string::npos)
      << parsed.status();
}

TEST_F(ServerConfigTest, TheShippedExampleConfigIsValid) {
  auto parsed =
      Load({"--config", std::string(test_paths::kSourceDir) + "/config/voxserve.example.yaml"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->config.service.voice_aliases.at("zh_female").voice, "cmn+f3");
}

TEST_F(ServerConfigTest, UnknownFlagIsAnError) {
  auto parsed = Load({"--no-such-flag"});
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(std::string(parsed.status().message()).find("--help"), std::string::npos);
}

TEST_F(ServerConfigTest, HelpListsEveryOptionWithItsEnvironmentVariable) {
  auto parsed = Load({"--help"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->exit_now);
  for (const char* text : {"--port", "VOXSERVE_PORT", "http.port", "--max-input-chars",
                           "VOXSERVE_MAX_INPUT_CHARS", "--drain-timeout-ms", "--config"}) {
    EXPECT_NE(parsed->message.find(text), std::string::npos) << text;
  }
}

TEST_F(ServerConfigTest, VoicesKeysComeFromTheFileFlagsAndEnvironmentAndAreChecked) {
  auto defaults = Load({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_TRUE(defaults->config.service.voices.dir.empty()) << "cloning is off by default";
  EXPECT_FALSE(defaults->config.service.voices.test_cloner);

  WriteConfig("voices:\n  dir: /tmp/v\n  max_count: 7\n  max_upload_bytes: 4096\n");
  auto file = Load({"--config", path_.string(), "--voices-max-bytes", "2097152"},
                   {{"VOXSERVE_VOICES_TEST_CLONER", "true"}});
  ASSERT_TRUE(file.ok()) << file.status();
  const store::VoiceStoreConfig& voices = file->config.service.voices;
  EXPECT_EQ(voices.dir, "/tmp/v");
  EXPECT_EQ(voices.max_count, 7);
  EXPECT_EQ(voices.max_upload_bytes, 4096u);
  EXPECT_EQ(voices.max_bytes, 2097152u);
  EXPECT_TRUE(voices.test_cloner);

  WriteConfig("voices:\n  max_count: 0\n");
  auto bad = Load({"--config", path_.string()});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("voices.max_count"), std::string::npos) << bad.status();
  WriteConfig("voices:\n  directory: /tmp/v\n");
  auto misspelled = Load({"--config", path_.string()});
  ASSERT_FALSE(misspelled.ok());
  EXPECT_NE(misspelled.status().message().find("directory"), std::string::npos);
}

TEST_F(ServerConfigTest, ThePostgresVoiceBackendIsConfiguredUnderVoicesPostgres) {
  WriteConfig(
      "voices:\n  backend: postgres\n  postgres:\n    dsn_file: /run/secrets/db/dsn\n"
      "    resync_ms: 500\n    statement_timeout_ms: 2000\n"
      "    idle_in_transaction_timeout_ms: 1500\n");
  auto file = Load({"--config", path_.string()},
                   {{"VOXSERVE_VOICES_POSTGRES_DSN", "host=db dbname=voxserve"}});
  ASSERT_TRUE(file.ok()) << file.status();
  const store::VoiceStoreConfig& voices = file->config.service.voices;
  EXPECT_EQ(voices.backend, "postgres");
  EXPECT_EQ(voices.postgres_dsn_file, "/run/secrets/db/dsn");
  EXPECT_EQ(voices.postgres_dsn, "host=db dbname=voxserve");
  EXPECT_EQ(voices.postgres_resync_ms, 500);
  EXPECT_EQ(voices.postgres_statement_timeout_ms, 2000);
  EXPECT_EQ(voices.postgres_idle_in_transaction_timeout_ms, 1500);
  EXPECT_TRUE(voices.enabled());
  auto defaults = Load({});
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->config.service.voices.postgres_idle_in_transaction_timeout_ms, 5000);
  auto too_short = Load({"--voices-postgres-idle-timeout-ms", "50"});
  ASSERT_FALSE(too_short.ok());
  EXPECT_NE(too_short.status().message().find("--voices-postgres-idle-timeout-ms: 50 is outside "
                                              "100..600000"),
            std::string::npos)
      << too_short.status();

  WriteConfig("voices:\n  backend: sqlite\n");
  auto bad = Load({"--config", path_.string()});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("voices.backend"), std::string::npos) << bad.status();
  auto flag = Load({"--voices-backend", "postgres", "--voices-postgres-dsn-env", "DATABASE_URL"});
  ASSERT_TRUE(flag.ok()) << flag.status();
  EXPECT_EQ(flag->config.service.voices.postgres_dsn_env, "DATABASE_URL");
}

TEST_F(ServerConfigTest, TheResponseCacheIsOffAndNormalizationOnByDefault) {
  auto defaults = Load({});
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_FALSE(defaults->config.service.cache.enabled);
  EXPECT_TRUE(defaults->config.service.normalize_text);

  WriteConfig(
      "cache:\n  enabled: true\n  max_bytes: 2097152\n  max_entries: 50\n"
      "  max_entry_bytes: 65536\ntext:\n  normalize: false\n");
  auto file = Load({"--config", path_.string()});
  ASSERT_TRUE(file.ok()) << file.status();
  const service::ResponseCacheConfig& cache = file->config.service.cache;
  EXPECT_TRUE(cache.enabled);
  EXPECT_EQ(cache.max_bytes, 2097152u);
  EXPECT_EQ(cache.max_entries, 50u);
  EXPECT_EQ(cache.max_entry_bytes, 65536u);
  EXPECT_FALSE(file->config.service.normalize_text);

  auto flags = Load({"--cache-enabled", "true", "--cache-max-entries", "7"},
                    {{"VOXSERVE_TEXT_NORMALIZE", "false"}});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_TRUE(flags->config.service.cache.enabled);
  EXPECT_EQ(flags->config.service.cache.max_entries, 7u);
  EXPECT_FALSE(flags->config.service.normalize_text);

  auto small = Load({"--cache-max-bytes", "1000"});
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.status().message().find("--cache-max-bytes"), std::string::npos)
      << small.status();
  WriteConfig("cache:\n  max_bytes: 1000\n");
  auto small_in_file = Load({"--config", path_.string()});
  ASSERT_FALSE(small_in_file.ok());
  EXPECT_NE(small_in_file.status().message().find("cache.max_bytes"), std::string::npos)
      << small_in_file.status();
}

TEST_F(ServerConfigTest, WyomingIsOffByDefaultAndItsKeysComeFromEverySource) {
  auto defaults = Load({});
  ASSERT_TRUE(defaults.ok());
  const transport::wyoming::WyomingConfig& off = defaults->config.wyoming;
  EXPECT_FALSE(off.enabled);
  EXPECT_EQ(off.port, 10200);
  EXPECT_TRUE(off.host.empty()) << "http.host's";
  EXPECT_TRUE(off.allow.empty());

  WriteConfig(
      "wyoming:\n  enabled: true\n  port: 10300\n  max_connections: 8\n"
      "  allow: [127.0.0.1, 192.168.1.0/24]\n");
  auto file = Load({"--config", path_.string(), "--wyoming-host", "0.0.0.0"},
                   {{"VOXSERVE_WYOMING_IDLE_TIMEOUT_MS", "5000"}});
  ASSERT_TRUE(file.ok()) << file.status();
  const transport::wyoming::WyomingConfig& on = file->config.wyoming;
  EXPECT_TRUE(on.enabled);
  EXPECT_EQ(on.port, 10300);
  EXPECT_EQ(on.host, "0.0.0.0");
  EXPECT_EQ(on.max_connections, 8u);
  EXPECT_EQ(on.idle_timeout_ms, 5000);
  EXPECT_EQ(on.allow, (std::vector<std::string>{"127.0.0.1", "192.168.1.0/24"}));

  auto flag = Load({"--wyoming-allow", "::1, 10.0.0.0/8"});
  ASSERT_TRUE(flag.ok()) << flag.status();
  // Entries are trimmed (every list key shares one setter).
  EXPECT_EQ(flag->config.wyoming.allow, (std::vector<std::string>{"::1", "10.0.0.0/8"}));

  auto bad = Load({"--wyoming-allow", "10.0.0.0/40"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("10.0.0.0/40"), std::string::npos) << bad.status();
  auto help = Load({"--help"});
  ASSERT_TRUE(help.ok());
  for (const char* text : {"--wyoming-enabled", "VOXSERVE_WYOMING_PORT", "wyoming.allow"}) {
    EXPECT_NE(help->message.find(text), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace voxserve::server
