// Offline subcommands that move cloned voices between the two backends (docs/voice-cloning.md,
// "Moving voices between backends"):
//   voxserve voices import --dir DIR --dsn DSN   every voice of the directory into PostgreSQL
//   voxserve voices export --dir DIR --dsn DSN   every voice in PostgreSQL into the directory
// Ids, names and creation times are kept; a voice whose id or name the destination already has
// is skipped (so a second run copies only what is new). --dsn-env VAR or --dsn-file FILE name
// the DSN instead of --dsn.
#pragma once

namespace voxserve::server {

bool IsVoiceCommandLine(int argc, const char* const* argv);
// Exit code: 0 all copied or already there, 1 a voice or a store failed, 2 usage.
int RunVoiceCommand(int argc, const char* const* argv);

}  // namespace voxserve::server
