// voxctl's subcommands over a Client: say (synthesize to a file or stdout), voices, models,
// health. Each returns the process exit code and writes its messages to stderr.
#pragma once

#include <string>

#include "client/client.h"

namespace voxserve::voxctl {

struct SayOptions {
  std::string text;    // empty: read stdin
  std::string output;  // file, "-" for stdout, empty: stdout unless it is a terminal
  std::string format;  // empty: from the output's extension, else fallback_format
  std::string fallback_format = "mp3";  // wav for wyoming:// (raw PCM only)
  bool stream = false;
  bool sse = false;
  client::SpeechRequest request;  // voice, model, speed, instructions, request id
};

struct Verbosity {
  bool quiet = false;    // no summary line
  bool verbose = false;  // every attempt, with its endpoint and outcome
};

int Say(client::Client& client, SayOptions options, Verbosity verbosity);
int ListVoices(client::Client& client, const client::VoiceFilter& filter, bool json,
               Verbosity verbosity);
int ListModels(client::Client& client, bool json, Verbosity verbosity);
// probe kDetail prints /health's JSON; every probe exits 0 on 200 and 3 on 503.
int Health(client::Client& client, client::HealthProbe probe, Verbosity verbosity);

}  // namespace voxserve::voxctl
