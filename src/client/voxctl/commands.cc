#include "client/voxctl/commands.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <iterator>

#include "client/voxctl/exit_codes.h"
#include "nlohmann/json.hpp"

namespace voxserve::voxctl {
namespace {

using nlohmann::json;

int Fail(ExitCode code, const std::string& message) {
  std::cerr << "voxctl: " << message << "\n";
  return code;
}

int Fail(const absl::Status& status) {
  return Fail(ExitCodeFor(status), std::string(status.message()));
}

void PrintAttempts(const client::CallInfo& info, Verbosity verbosity) {
  if (!verbosity.verbose) return;
  for (size_t i = 0; i < info.attempts.size(); ++i) {
    const client::Attempt& attempt = info.attempts[i];
    std::cerr << "voxctl: attempt " << i + 1 << " → " << attempt.endpoint;
    if (attempt.backoff_before.count() > 0) {
      std::cerr << " (after " << attempt.backoff_before.count() / 1'000'000 << " ms backoff)";
    }
    std::cerr << ": " << (attempt.status.ok() ? "ok" : std::string(attempt.status.message()))
              << "\n";
  }
}

std::string FormatFor(const SayOptions& options) {
  if (!options.format.empty()) return options.format;
  std::string extension = std::filesystem::path(options.output).extension().string();
  for (const char* known : {"mp3", "opus", "aac", "flac", "wav", "pcm"}) {
    if (extension == std::string(".") + known) return known;
  }
  if (extension == ".ogg") return "opus";
  return options.fallback_format;
}

// Where audio goes: stdout or a file (written to FILE.part and renamed on success, unless
// streaming, when the file itself grows as audio arrives).
class AudioOutput {
 public:
  ~AudioOutput() {
    if (file_ != nullptr && file_ != stdout) std::fclose(file_);
    if (!temporary_.empty()) std::filesystem::remove(temporary_);
  }
  absl::Status Open(const std::string& output, bool stream) {
    if (output.empty() || output == "-") {
      file_ = stdout;
      return absl::OkStatus();
    }
    final_ = output;
    std::string path = stream ? output : output + ".part";
    if (!stream) temporary_ = path;
    file_ = std::fopen(path.c_str(), "wb");
    if (file_ == nullptr)
      return absl::InternalError("cannot write " + path + ": " + std::strerror(errno));
    return absl::OkStatus();
  }
  bool Write(std::string_view bytes, bool flush) {
    ok_ = ok_ && std::fwrite(bytes.data(), 1, bytes.size(), file_) == bytes.size();
    if (flush) ok_ = ok_ && std::fflush(file_) == 0;
    return ok_;
  }
  bool Commit() {
    ok_ = ok_ && std::fflush(file_) == 0;
    if (file_ != stdout) {
      ok_ = std::fclose(file_) == 0 && ok_;
      file_ = nullptr;
      if (ok_ && !temporary_.empty()) {
        std::error_code ec;
        std::filesystem::rename(temporary_, final_, ec);
        ok_ = !ec;
        if (ok_) temporary_.clear();
      }
    }
    return ok_;
  }
  std::string name() const { return final_.empty() ? "stdout" : final_; }

 private:
  FILE* file_ = nullptr;
  std::string final_;
  std::string temporary_;
  bool ok_ = true;
};

}  // namespace

int Say(client::Client& client, SayOptions options, Verbosity verbosity) {
  if (options.text.empty()) {
    options.text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    if (std::cin.bad()) return Fail(kLocalIo, "cannot read the text from stdin");
  }
  if (options.text.find_first_not_of(" \t\r\n") == std::string::npos) {
    return Fail(kUsage, "no text: give it as an argument or on stdin");
  }
  if (options.output.empty() && isatty(STDOUT_FILENO)) {
    return Fail(kUsage, "refusing to write audio to a terminal: use -o FILE, -o - or a redirect");
  }
  client::SpeechRequest request = options.request;
  request.input = options.text;
  request.response_format = FormatFor(options);
  AudioOutput output;
  if (absl::Status status = output.Open(options.output, options.stream || options.sse);
      !status.ok()) {
    return Fail(kLocalIo, std::string(status.message()));
  }
  client::CallInfo info;
  absl::StatusOr<client::SpeechResult> result;
  bool write_failed = false;
  if (options.stream || options.sse) {
    request.stream = options.sse ? client::StreamFormat::kSse : client::StreamFormat::kAudio;
    result = client.SynthesizeStream(
        request,
        [&](std::string_view audio) { write_failed = !output.Write(audio, true) || write_failed; },
        &info);
  } else {
    result = client.Synthesize(request, &info);
    if (result.ok()) write_failed = !output.Write(result->audio, false);
  }
  PrintAttempts(info, verbosity);
  if (!result.ok()) return Fail(result.status());
  if (write_failed || !output.Commit()) return Fail(kLocalIo, "cannot write " + output.name());
  if (!verbosity.quiet) {
    char line[256];
    std::string seconds =
        result->audio_seconds ? std::to_string(*result->audio_seconds).substr(0, 5) + " s of " : "";
    std::snprintf(line, sizeof line, "voxctl: wrote %s%s audio (%zu bytes) to %s in %.2f s\n",
                  seconds.c_str(), request.response_format.c_str(), result->audio_bytes,
                  output.name().c_str(), std::chrono::duration<double>(result->total).count());
    std::cerr << line;
  }
  return kOk;
}

int ListVoices(client::Client& client, const client::VoiceFilter& filter, bool as_json,
               Verbosity verbosity) {
  client::CallInfo info;
  auto voices = client.ListVoices(filter, &info);
  PrintAttempts(info, verbosity);
  if (!voices.ok()) return Fail(voices.status());
  if (as_json) {
    json out = json::array();
    for (const client::Voice& v : *voices) {
      out.push_back({{"id", v.id},
                     {"model", v.model},
                     {"engine", v.engine},
                     {"language", v.language},
                     {"sample_rate", v.sample_rate},
                     {"description", v.description},
                     {"alias_of", v.alias_of}});
    }
    std::cout << out.dump(2) << "\n";
    return kOk;
  }
  std::printf("%-24s %-10s %-10s %6s  %s\n", "VOICE", "LANGUAGE", "MODEL", "RATE", "ALIAS OF");
  for (const client::Voice& v : *voices) {
    std::printf("%-24s %-10s %-10s %6d  %s\n", v.id.c_str(), v.language.c_str(), v.model.c_str(),
                v.sample_rate, v.alias_of.c_str());
  }
  return kOk;
}

int ListModels(client::Client& client, bool as_json, Verbosity verbosity) {
  client::CallInfo info;
  auto models = client.ListModels(&info);
  PrintAttempts(info, verbosity);
  if (!models.ok()) return Fail(models.status());
  if (as_json) {
    json out = json::array();
    for (const client::Model& m : *models) {
      out.push_back({{"id", m.id},
                     {"engine", m.engine},
                     {"state", m.state},
                     {"voices", m.voices},
                     {"alias_of", m.alias_of},
                     {"error", m.error}});
    }
    std::cout << out.dump(2) << "\n";
    return kOk;
  }
  std::printf("%-20s %-10s %-12s %6s  %s\n", "MODEL", "ENGINE", "STATE", "VOICES", "ALIAS OF");
  for (const client::Model& m : *models) {
    std::printf("%-20s %-10s %-12s %6d  %s\n", m.id.c_str(), m.engine.c_str(), m.state.c_str(),
                m.voices, m.alias_of.c_str());
  }
  return kOk;
}

int Health(client::Client& client, client::HealthProbe probe, Verbosity verbosity) {
  client::CallInfo info;
  auto health = client.CheckHealth(probe, &info);
  PrintAttempts(info, verbosity);
  if (!health.ok()) return Fail(health.status());
  std::cout << health->body << (health->body.ends_with("\n") ? "" : "\n");
  if (health->http_status != 200) return Fail(kUnreachable, "the server is not ready (HTTP 503)");
  return kOk;
}

}  // namespace voxserve::voxctl
