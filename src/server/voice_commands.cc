#include "server/voice_commands.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>

#include "CLI/CLI.hpp"
#include "core/logging.h"
#include "store/postgres_voice_store.h"
#include "store/voice_file.h"
#include "store/voice_store.h"

namespace voxserve::server {
namespace {

constexpr int kExitProblems = 1;
constexpr int kExitUsage = 2;

// The tool moves what exists: the destination's bounds are the server's business on new
// registrations, not a reason to leave voices behind.
store::VoiceStoreConfig Unbounded() {
  store::VoiceStoreConfig config;
  config.max_count = 1'000'000;
  config.max_bytes = 1ull << 40;
  return config;
}

void Say(const char* format, const std::string& a, const std::string& b = {}) {
  std::fprintf(stderr, format, a.c_str(), b.c_str());
}

}  // namespace

bool IsVoiceCommandLine(int argc, const char* const* argv) {
  return argc >= 2 && std::string_view(argv[1]) == "voices";
}

int RunVoiceCommand(int argc, const char* const* argv) {
  CLI::App app{"voxserve voices: move cloned voices between a voices directory and PostgreSQL",
               "voxserve voices"};
  std::string dir, dsn, dsn_env, dsn_file;
  int wait_seconds = 30;
  CLI::App* import = app.add_subcommand("import", "copy every voice of --dir into PostgreSQL");
  CLI::App* export_to = app.add_subcommand("export", "copy every voice in PostgreSQL into --dir");
  for (CLI::App* command : {import, export_to}) {
    command->add_option("--dir", dir, "the voices directory (voices.dir)")->required();
    command->add_option("--dsn", dsn, "libpq connection string or URI (voices.postgres.dsn)");
    command->add_option("--dsn-env", dsn_env, "environment variable holding the DSN");
    command->add_option("--dsn-file", dsn_file, "file holding the DSN");
    command->add_option("--wait-seconds", wait_seconds, "how long to wait for the database")
        ->default_val(30);
  }
  app.require_subcommand(1);
  try {
    app.parse(argc - 1, argv + 1);  // "voices" stands where the program name would
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : kExitUsage;
  }
  (void)core::ConfigureLogging("warn", "text");  // the stores log what they skip

  store::VoiceStoreConfig pg_config = Unbounded();
  pg_config.backend = "postgres";
  pg_config.postgres_dsn = dsn;
  pg_config.postgres_dsn_env = dsn_env;
  pg_config.postgres_dsn_file = dsn_file;
  auto postgres = store::PostgresVoiceStore::Create(pg_config, nullptr);
  if (!postgres.ok()) {
    Say("voxserve voices: %s\n", std::string(postgres.status().message()));
    return kExitUsage;
  }
  if (!(*postgres)->WaitUntilConnected(std::chrono::seconds(wait_seconds))) {
    Say("voxserve voices: %s\n", (*postgres)->Problem());
    return kExitProblems;
  }
  store::VoiceStoreConfig dir_config = Unbounded();
  dir_config.dir = dir;
  auto directory = store::VoiceStore::Create(dir_config);
  if (!directory.ok()) {
    Say("voxserve voices: %s\n", std::string(directory.status().message()));
    return kExitProblems;
  }

  const bool importing = import->parsed();
  store::VoiceBackend& from = importing ? static_cast<store::VoiceBackend&>(**directory)
                                          : static_cast<store::VoiceBackend&>(**postgres);
  int copied = 0, skipped = 0, failed = 0;
  for (const store::StoredVoice& voice : from.List()) {
    const std::string& id = voice.metadata.id;
    auto profile = from.LoadProfile(id);
    absl::Status status = profile.status();
    if (status.ok()) {
      if (importing) {
        const std::string encoded = store::EncodeVoiceFile(voice.metadata, *profile);
        store::StoredVoice row = voice;
        row.file_bytes = encoded.size();
        status = (*postgres)->Import(row, encoded);
      } else {
        status = (*directory)->Import(voice.metadata, *profile);
      }
    }
    if (status.ok()) {
      ++copied;
    } else if (status.code() == absl::StatusCode::kAlreadyExists) {
      ++skipped;
      Say("voxserve voices: skipped %s: %s\n", id, std::string(status.message()));
    } else {
      ++failed;
      Say("voxserve voices: %s failed: %s\n", id, std::string(status.message()));
    }
  }
  std::printf("%s %d voice(s), skipped %d already there, %d failed\n",
              importing ? "imported" : "exported", copied, skipped, failed);
  return failed == 0 ? 0 : kExitProblems;
}

}  // namespace voxserve::server
