#include "engine/espeak/espeak_synth_process.h"

#include <espeak-ng/espeak_ng.h>
#include <espeak-ng/speak_lib.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "core/error.h"

extern char** environ;

namespace voxserve::engine {
namespace {

// What makes a start of this executable the template (read by RunTemplateIfAsked, before main).
constexpr char kTemplateFdVariable[] = "VOXSERVE_ESPEAK_TEMPLATE_FD";
constexpr char kParentVariable[] = "VOXSERVE_ESPEAK_TEMPLATE_PARENT";
constexpr char kDataPathVariable[] = "VOXSERVE_ESPEAK_DATA_PATH";
constexpr int kTemplateFd = 3;  // where the template finds its end of the socketpair
// A request holds a voice name and one segment (limits.max_segment_chars, 100000 at most);
// anything longer is not ours.
constexpr uint32_t kMaxRequestBytes = 4 << 20;
// A reply holds one segment's samples: 16 bits at 22050 Hz, an hour is 159 MB.
constexpr uint32_t kMaxReplyBytes = 1u << 30;

// ---- Bytes on the socket and the pipe: a u32 length, then that many bytes.

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == ENOTSOCK) n = ::write(fd, data, size);  // the child's pipe
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool ReadAll(int fd, char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::read(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;  // 0: the other end is gone
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

void PutU32(std::string& out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

bool WriteMessage(int fd, const std::string& payload) {
  std::string length;
  PutU32(length, static_cast<uint32_t>(payload.size()));
  return WriteAll(fd, length.data(), length.size()) && WriteAll(fd, payload.data(), payload.size());
}

bool ReadMessage(int fd, uint32_t max_bytes, std::string* payload) {
  unsigned char length[4];
  if (!ReadAll(fd, reinterpret_cast<char*>(length), 4)) return false;
  const uint32_t size =
      length[0] | (length[1] << 8) | (length[2] << 16) | (static_cast<uint32_t>(length[3]) << 24);
  if (size > max_bytes) return false;
  payload->resize(size);
  return ReadAll(fd, payload->data(), size);
}

// Reads what a message holds, in order; false once something is missing.
class Cursor {
 public:
  explicit Cursor(std::string_view bytes) : bytes_(bytes) {}
  bool U32(uint32_t* out) {
    if (bytes_.size() < 4) return false;
    const auto* b = reinterpret_cast<const unsigned char*>(bytes_.data());
    *out = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
    bytes_.remove_prefix(4);
    return true;
  }
  bool Bytes(size_t size, std::string_view* out) {
    if (bytes_.size() < size) return false;
    *out = bytes_.substr(0, size);
    bytes_.remove_prefix(size);
    return true;
  }
  bool String(std::string_view* out) {
    uint32_t size = 0;
    return U32(&size) && Bytes(size, out);
  }
  bool done() const { return bytes_.empty(); }

 private:
  std::string_view bytes_;
};

// Reply: "E" + message, or "K" + u32 samples + int16 samples (little-endian, as espeak-ng
// gives them) + u32 words + three u32 (position, length, audio ms) each.
std::string ErrorReply(std::string_view message) { return "E" + std::string(message); }

// ---- The template and its children (this file's half that runs before main).

struct Collected {
  std::string samples;  // int16, as delivered
  std::vector<EspeakWordEvent> words;
};

// espeak_Synth's callback, in a child: the samples and word events of the one synthesis.
int Collect(short* samples, int count, espeak_EVENT* events) {
  auto* out = static_cast<Collected*>(events->user_data);
  for (const espeak_EVENT* event = events; event->type != espeakEVENT_LIST_TERMINATED; ++event) {
    if (event->type == espeakEVENT_WORD) {
      out->words.push_back({event->text_position, event->length, event->audio_position});
    }
  }
  if (samples != nullptr && count > 0) {
    out->samples.append(reinterpret_cast<const char*>(samples), count * sizeof(short));
  }
  return 0;  // continue
}

// In a fresh child: the one synthesis a request asks for.
std::string SynthesizeInChild(const std::string& request) {
  Cursor in(request);
  std::string_view voice, text;
  uint32_t rate = 0, pitch = 0;
  if (!in.String(&voice) || !in.U32(&rate) || !in.U32(&pitch) || !in.String(&text) || !in.done()) {
    return ErrorReply("malformed synthesis request");
  }
  const std::string voice_name(voice), text_z(text);  // NUL-terminated for the library
  if (espeak_SetVoiceByName(voice_name.c_str()) != EE_OK) {
    return ErrorReply("espeak-ng could not select voice '" + voice_name + "'");
  }
  espeak_SetParameter(espeakRATE, static_cast<int>(rate), 0);
  // kVoicePitch: left at the voice's own, so plain requests keep their bytes.
  if (pitch <= 100) espeak_SetParameter(espeakPITCH, static_cast<int>(pitch), 0);
  Collected out;
  espeak_ERROR error = espeak_Synth(text_z.c_str(), text_z.size() + 1, 0, POS_CHARACTER, 0,
                                    espeakCHARS_UTF8, nullptr, &out);
  if (error != EE_OK) {
    return ErrorReply("espeak-ng synthesis failed with code " + std::to_string(error));
  }
  std::string reply = "K";
  PutU32(reply, static_cast<uint32_t>(out.samples.size() / sizeof(short)));
  reply += out.samples;
  PutU32(reply, static_cast<uint32_t>(out.words.size()));
  for (const EspeakWordEvent& word : out.words) {
    PutU32(reply, static_cast<uint32_t>(word.text_position));
    PutU32(reply, static_cast<uint32_t>(word.length));
    PutU32(reply, static_cast<uint32_t>(word.audio_ms));
  }
  return reply;
}

std::string DescribeExit(int status) {
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  return "ended";
}

// Forks the child for one request and relays its reply (or why there is none).
std::string ForkAndSynthesize(const std::string& request) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return ErrorReply(std::string("pipe failed: ") + std::strerror(errno));
  }
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return ErrorReply(std::string("fork failed: ") + std::strerror(errno));
  }
  if (child == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::close(pipe_fds[0]);
    ::close(kTemplateFd);
    const std::string reply = SynthesizeInChild(request);
    std::_Exit(WriteMessage(pipe_fds[1], reply) ? 0 : 1);
  }
  ::close(pipe_fds[1]);
  std::string reply;
  const bool read = ReadMessage(pipe_fds[0], kMaxReplyBytes, &reply);  // while the child writes
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!read || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return ErrorReply("espeak-ng's synthesis process " + DescribeExit(status));
  }
  return reply;
}

[[noreturn]] void RunTemplate(pid_t parent, const char* data_path) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) std::_Exit(0);  // the parent died before the line above
  // As the espeak-ng command line starts (src/espeak-ng.c); espeak_Initialize would exit(1)
  // on a data folder it cannot read, or go on as if it had read it.
  espeak_ng_InitializePath(data_path[0] == '\0' ? nullptr : data_path);
  espeak_ng_ERROR_CONTEXT context = nullptr;
  espeak_ng_STATUS status = espeak_ng_Initialize(&context);
  if (status == ENS_OK) status = espeak_ng_InitializeOutput(ENOUTPUT_MODE_SYNCHRONOUS, 0, nullptr);
  std::string ready = "K";
  if (status != ENS_OK) {
    char message[512] = {};
    espeak_ng_GetStatusCodeMessage(status, message, sizeof message);
    espeak_ng_ClearErrorContext(&context);
    ready = ErrorReply(message);
  } else {
    PutU32(ready, static_cast<uint32_t>(espeak_ng_GetSampleRate()));
  }
  if (!WriteMessage(kTemplateFd, ready) || status != ENS_OK) std::_Exit(0);
  espeak_SetSynthCallback(Collect);
  std::string request;
  // One request at a time, until the parent closes the socket.
  while (ReadMessage(kTemplateFd, kMaxRequestBytes, &request)) {
    if (!WriteMessage(kTemplateFd, ForkAndSynthesize(request))) break;
  }
  std::_Exit(0);
}

// Before main, in every process of a binary that links this file: a start of the executable
// meant as the template (EspeakSynthProcess::Start sets the variables) runs it and never
// returns; any other start goes on to main untouched.
[[gnu::constructor]] void RunTemplateIfAsked() {
  const char* fd = std::getenv(kTemplateFdVariable);
  if (fd == nullptr || std::atoi(fd) != kTemplateFd) return;
  const char* parent = std::getenv(kParentVariable);
  const char* data_path = std::getenv(kDataPathVariable);
  RunTemplate(parent != nullptr ? static_cast<pid_t>(std::atol(parent)) : 0,
              data_path != nullptr ? data_path : "");
}

absl::Status Errno(const std::string& what) {
  return core::Internal("espeak-ng's template process: " + what + ": " + std::strerror(errno));
}

// Spawns the template with its end of a socketpair as kTemplateFd; our end and its pid.
absl::StatusOr<std::pair<int, pid_t>> SpawnTemplate(const std::string& data_path) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return Errno("socketpair");
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, "VOXSERVE_ESPEAK_", 16) != 0) env.emplace_back(*entry);
  }
  env.push_back(std::string(kTemplateFdVariable) + "=" + std::to_string(kTemplateFd));
  env.push_back(std::string(kParentVariable) + "=" + std::to_string(::getpid()));
  env.push_back(std::string(kDataPathVariable) + "=" + data_path);
  std::vector<char*> envp;
  for (std::string& entry : env) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::string name = "voxserve-espeak-template";
  char* argv[] = {name.data(), nullptr};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pair[1], kTemplateFd);  // clears close-on-exec
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int signal_number : {SIGTERM, SIGINT, SIGHUP, SIGPIPE}) sigaddset(&defaults, signal_number);
  posix_spawnattr_setsigmask(&attr, &none);  // the server blocks signals for sigwait
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);  // a terminal's Ctrl-C is for the server, which drains
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, "/proc/self/exe", &actions, &attr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(pair[1]);
  if (spawned != 0) {
    ::close(pair[0]);
    errno = spawned;
    return Errno("posix_spawn");
  }
  return std::pair{pair[0], pid};
}

void KillAndReap(int fd, pid_t pid) {
  if (fd >= 0) ::close(fd);
  if (pid <= 0) return;
  ::kill(pid, SIGKILL);  // its child, if any, follows (PR_SET_PDEATHSIG)
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

absl::Status AwaitReady(int fd) {
  std::string ready;
  if (!ReadMessage(fd, 4096, &ready) || ready.empty()) {
    return core::Internal("espeak-ng's template process ended before it was ready");
  }
  if (ready[0] != 'K') {
    return core::Internal("espeak-ng failed to initialize in its template process: " +
                          ready.substr(1));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<EspeakSynthProcess>> EspeakSynthProcess::Start(
    const std::string& data_path) {
  auto spawned = SpawnTemplate(data_path);
  if (!spawned.ok()) return spawned.status();
  std::unique_ptr<EspeakSynthProcess> process(
      new EspeakSynthProcess(data_path, spawned->first, spawned->second));
  if (absl::Status ready = AwaitReady(process->fd_); !ready.ok()) return ready;
  return process;
}

EspeakSynthProcess::~EspeakSynthProcess() { Stop(); }

void EspeakSynthProcess::Stop() {
  KillAndReap(fd_, pid_);
  fd_ = -1;
  pid_ = 0;
}

absl::Status EspeakSynthProcess::Restart() {
  Stop();
  auto spawned = SpawnTemplate(data_path_);
  if (!spawned.ok()) return spawned.status();
  fd_ = spawned->first;
  pid_ = spawned->second;
  if (absl::Status ready = AwaitReady(fd_); !ready.ok()) {
    Stop();
    return ready;
  }
  return absl::OkStatus();
}

absl::StatusOr<EspeakSynthProcess::Output> EspeakSynthProcess::Synthesize(std::string_view voice,
                                                                          int rate_wpm, int pitch,
                                                                          std::string_view text) {
  std::string request;
  PutU32(request, static_cast<uint32_t>(voice.size()));
  request += voice;
  PutU32(request, static_cast<uint32_t>(rate_wpm));
  PutU32(request, pitch < 0 ? 0xFFFFFFFFu : static_cast<uint32_t>(std::min(pitch, 100)));
  PutU32(request, static_cast<uint32_t>(text.size()));
  request += text;
  if (request.size() > kMaxRequestBytes) {
    return core::InvalidArgument("text too long for one espeak-ng synthesis");
  }
  std::string reply;
  // A template found gone (killed, or it died between calls) is started again and asked once
  // more: a synthesis has no effect but its reply, so asking twice is safe.
  bool answered = false;
  for (int attempt = 0; attempt < 2 && !answered; ++attempt) {
    if (fd_ < 0) {
      if (absl::Status restarted = Restart(); !restarted.ok()) return restarted;
    }
    answered = WriteMessage(fd_, request) && ReadMessage(fd_, kMaxReplyBytes, &reply);
    if (!answered) Stop();
  }
  if (!answered) return core::Internal("espeak-ng's template process died twice in a row");
  if (reply.empty() || reply[0] != 'K') {
    return core::Internal(reply.empty() ? std::string("empty reply from espeak-ng's process")
                                        : reply.substr(1));
  }
  Cursor in(std::string_view(reply).substr(1));
  uint32_t count = 0, words = 0;
  std::string_view samples;
  Output out;
  bool ok = in.U32(&count) && in.Bytes(static_cast<size_t>(count) * 2, &samples) && in.U32(&words);
  out.samples.reserve(count);
  for (size_t i = 0; ok && i < count; ++i) {
    const auto* b = reinterpret_cast<const unsigned char*>(samples.data() + 2 * i);
    const auto sample = static_cast<int16_t>(b[0] | (b[1] << 8));
    out.samples.push_back(static_cast<float>(sample) / 32768.0f);
  }
  for (uint32_t i = 0; ok && i < words; ++i) {
    uint32_t position = 0, length = 0, ms = 0;
    ok = in.U32(&position) && in.U32(&length) && in.U32(&ms);
    out.words.push_back(
        {static_cast<int>(position), static_cast<int>(length), static_cast<int>(ms)});
  }
  if (!ok || !in.done()) {
    Stop();
    return core::Internal("malformed reply from espeak-ng's process");
  }
  return out;
}

}  // namespace voxserve::engine
