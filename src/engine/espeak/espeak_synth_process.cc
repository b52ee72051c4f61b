#include "engine/espeak/espeak_synth_process.h"

#include <espeak-ng/espeak_ng.h>
#include <espeak-ng/speak_lib.h>
#include <link.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "audio/sample_conversion.h"
#include "core/error.h"
#include "core/spawn_self.h"
#include "engine/espeak/espeak_messages.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define VOXSERVE_SANITIZED_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define VOXSERVE_SANITIZED_HEAP 1
#endif
#endif
#if VOXSERVE_SANITIZED_HEAP
#include <sanitizer/allocator_interface.h>
#endif

extern char** environ;

namespace voxserve::engine {
namespace {

using espeak_messages::Cursor;
using espeak_messages::PutU32;
using espeak_messages::ReadMessage;
using espeak_messages::ReadMessageWithFd;
using espeak_messages::U32Bytes;
using espeak_messages::WriteMessage;
using espeak_messages::WriteMessageWithFd;

// What makes a start of this executable the template (read by RunTemplateIfAsked, before main).
constexpr char kTemplateFdVariable[] = "VOXSERVE_ESPEAK_TEMPLATE_FD";
constexpr char kDataPathVariable[] = "VOXSERVE_ESPEAK_DATA_PATH";
constexpr int kTemplateFd = 3;  // where the template finds its end of the socketpair
// A fork request holds a voice name ("gmw/en-US+klatt"); a template reply, a status and a pid.
constexpr uint32_t kMaxVoiceBytes = 4096;
// A request holds a voice name and one segment (limits.max_segment_chars, 100000 at most);
// anything longer is not ours.
constexpr uint32_t kMaxRequestBytes = 4 << 20;
// A reply holds one segment's samples: 16 bits at 22050 Hz, an hour is 159 MB.
constexpr uint32_t kMaxReplyBytes = 1u << 30;
// Buffers kept between requests up to this (a minute of audio); a longer one's is given back.
constexpr size_t kKeptBufferBytes = 8 << 20;

void ReleaseIfLarge(std::string& buffer) {
  if (buffer.capacity() > kKeptBufferBytes) std::string().swap(buffer);
}

// Reply: "E" + message, or "K" + u32 the speaker's pid + u32 samples + int16 samples
// (little-endian, as espeak-ng gives them) + u32 words + three u32 (position, length, audio ms)
// each.
std::string ErrorReply(std::string_view message) { return "E" + std::string(message); }

// ---- The template and its speakers (this file's half that runs before main).

// Bytes appended outside malloc (an anonymous mapping grown with mremap): a speaker's output must
// not move the heap's in-use count, which is how it tells that the library kept memory.
class MappedBuffer {
 public:
  MappedBuffer() = default;
  MappedBuffer(const MappedBuffer&) = delete;
  MappedBuffer& operator=(const MappedBuffer&) = delete;
  ~MappedBuffer() {
    if (data_ != nullptr) ::munmap(data_, capacity_);
  }
  bool Append(const void* bytes, size_t size) {
    if (size_ + size > capacity_ && !Grow(size_ + size)) return false;
    std::memcpy(static_cast<char*>(data_) + size_, bytes, size);
    size_ += size;
    return true;
  }
  void Clear() {
    size_ = 0;
    if (capacity_ > kKeptBufferBytes) {
      ::munmap(data_, capacity_);
      data_ = nullptr;
      capacity_ = 0;
    }
  }
  std::string_view view() const { return {static_cast<const char*>(data_), size_}; }

 private:
  bool Grow(size_t needed) {
    size_t capacity = std::max<size_t>(capacity_ * 2, 1 << 20);
    while (capacity < needed) capacity *= 2;
    void* grown = data_ == nullptr ? ::mmap(nullptr, capacity, PROT_READ | PROT_WRITE,
                                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                                   : ::mremap(data_, capacity_, capacity, MREMAP_MAYMOVE);
    if (grown == MAP_FAILED) return false;
    data_ = grown;
    capacity_ = capacity;
    return true;
  }
  void* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

struct Collected {
  MappedBuffer samples;  // int16, as delivered
  MappedBuffer words;    // three u32 each: position, length, audio ms
  bool overflowed = false;
};

// espeak_Synth's callback, in a speaker: the samples and word events of the one synthesis.
int Collect(short* samples, int count, espeak_EVENT* events) {
  auto* out = static_cast<Collected*>(events->user_data);
  if (out == nullptr) return 0;  // PrimeTheLibrary's
  bool ok = true;
  for (const espeak_EVENT* event = events; event->type != espeakEVENT_LIST_TERMINATED; ++event) {
    if (event->type != espeakEVENT_WORD) continue;
    for (int field : {event->text_position, event->length, event->audio_position}) {
      ok = out->words.Append(U32Bytes(static_cast<uint32_t>(field)).data(), 4) && ok;
    }
  }
  if (samples != nullptr && count > 0)
    ok = out->samples.Append(samples, count * sizeof(short)) && ok;
  out->overflowed = out->overflowed || !ok;
  return 0;  // continue
}

// libespeak-ng's own writable data: .data and .bss past the RELRO part, which hold every static
// of the library (wavegen's phase and flutter, the pause pending, the command queue, the
// parameters). Empty when the library is not a shared object of this process.
std::span<char> LibraryData() {
  std::span<char> found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        if (std::strstr(info->dlpi_name, "libespeak-ng") == nullptr) return 0;
        uintptr_t begin = 0, end = 0, relro_end = 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& header = info->dlpi_phdr[i];
          const uintptr_t start = info->dlpi_addr + header.p_vaddr;
          if (header.p_type == PT_LOAD && (header.p_flags & PF_W) != 0) {
            begin = start;
            end = start + header.p_memsz;
          }
          if (header.p_type == PT_GNU_RELRO) relro_end = start + header.p_memsz;
        }
        begin = std::max(begin, relro_end);
        if (end > begin)
          *static_cast<std::span<char>*>(out) = {reinterpret_cast<char*>(begin), end - begin};
        return 1;
      },
      &found);
  return found;
}

// Bytes the process has allocated: a speaker is single-threaded, so glibc's main arena and its
// mapped chunks; the sanitizers' own allocator under a sanitizer (glibc's is unused there).
size_t HeapInUse() {
#if VOXSERVE_SANITIZED_HEAP
  return __sanitizer_get_current_allocated_bytes();
#else
  const struct mallinfo2 info = ::mallinfo2();
  return info.uordblks + info.hblkhd;
#endif
}

void PrimeTheLibrary() {  // an empty synthesis: the text decoder made, a queued voice applied
  espeak_Synth("", 1, 0, POS_CHARACTER, 0, espeakCHARS_UTF8, nullptr, nullptr);
}

// A speaker's first byte of each reply: whether it stays (its state was put back) or exits.
constexpr char kSpeakerStays = 'S';
constexpr char kSpeakerExits = 'X';

// In a speaker: one request, spoken from the voice's checkpoint. Writes the reply (first byte
// kSpeakerStays or kSpeakerExits, then the reply for the server) and says whether it stays.
bool SpeakOne(int fd, const std::string& request, std::span<char> data,
              const std::vector<char>& checkpoint, Collected& out) {
  Cursor in(request);
  std::string_view voice, text;
  uint32_t rate = 0, pitch = 0;
  if (!in.String(&voice) || !in.U32(&rate) || !in.U32(&pitch) || !in.String(&text) || !in.done()) {
    WriteMessage(fd, kSpeakerExits + ErrorReply("malformed synthesis request"));
    return false;
  }
  const std::string text_z(text);  // NUL-terminated for the library
  out.samples.Clear();
  out.words.Clear();
  out.overflowed = false;
  // Every static of the library back as it was after the voice was set, and rand() (breathy
  // voices' noise) reseeded: the state a fresh speaker of this voice starts from.
  if (!data.empty()) std::memcpy(data.data(), checkpoint.data(), data.size());
  std::srand(1);
  const size_t heap_before = HeapInUse();
  espeak_SetParameter(espeakRATE, static_cast<int>(rate), 0);
  // kVoicePitch: left at the voice's own, so plain requests keep their bytes.
  if (pitch <= 100) espeak_SetParameter(espeakPITCH, static_cast<int>(pitch), 0);
  const espeak_ERROR error = espeak_Synth(text_z.c_str(), text_z.size() + 1, 0, POS_CHARACTER, 0,
                                          espeakCHARS_UTF8, nullptr, &out);
  // Memory the library kept (a second language's translator for a foreign word, say) would be
  // lost, or freed twice, once its pointer is put back: such a speaker answers and exits.
  const bool stays = !data.empty() && error == EE_OK && HeapInUse() == heap_before;
  const char first = stays ? kSpeakerStays : kSpeakerExits;
  if (error != EE_OK || out.overflowed) {
    const std::string why = error != EE_OK
                                ? "espeak-ng synthesis failed with code " + std::to_string(error)
                                : std::string("out of memory for espeak-ng's samples");
    WriteMessage(fd, kSpeakerExits + ErrorReply(why));  // the state after a failure is unknown
    return false;
  }
  std::string header(1, first);
  header += 'K';
  PutU32(header, static_cast<uint32_t>(::getpid()));
  PutU32(header, static_cast<uint32_t>(out.samples.view().size() / sizeof(short)));
  std::string word_count;
  PutU32(word_count, static_cast<uint32_t>(out.words.view().size() / 12));
  const std::string_view parts[] = {header, out.samples.view(), word_count, out.words.view()};
  return WriteMessage(fd, parts) && stays;
}

// A speaker: a child of the template that sets one voice, keeps the library's data as it is
// then, and speaks every request for that voice from it. Its first message says whether the
// voice was set.
[[noreturn]] void RunSpeaker(int fd, const std::string& voice) {
  espeak_SetSynthCallback(Collect);
  if (espeak_SetVoiceByName(voice.c_str()) != EE_OK) {
    WriteMessage(fd, ErrorReply("espeak-ng could not select voice '" + voice + "'"));
    std::_Exit(0);
  }
  PrimeTheLibrary();
  const std::span<char> data = LibraryData();
  const std::vector<char> checkpoint(data.begin(), data.end());
  if (!WriteMessage(fd, "K")) std::_Exit(0);
  Collected out;
  std::string request;
  while (ReadMessage(fd, kMaxRequestBytes, &request)) {
    if (!SpeakOne(fd, request, data, checkpoint, out)) break;
  }
  std::_Exit(0);
}

// In the template: forks a speaker for `voice` and hands its socket to the server with the reply
// "K" + u32 its pid (or answers "E" + why not). The template keeps no copy of the socket, so the
// speaker's only peer is the server. False once the server is gone.
bool HandOverSpeaker(const std::string& voice) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    return WriteMessage(kTemplateFd,
                        ErrorReply(std::string("socketpair: ") + std::strerror(errno)));
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(pair[0]);
    ::close(pair[1]);
    return WriteMessage(kTemplateFd, ErrorReply(std::string("fork: ") + std::strerror(error)));
  }
  if (pid == 0) {
    ::close(kTemplateFd);
    ::close(pair[0]);
    RunSpeaker(pair[1], voice);
  }
  ::close(pair[1]);
  std::string reply = "K";
  PutU32(reply, static_cast<uint32_t>(pid));
  const bool sent = WriteMessageWithFd(kTemplateFd, reply, pair[0]);
  ::close(pair[0]);
  return sent;
}

[[noreturn]] void RunTemplate(const char* data_path) {
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
  PrimeTheLibrary();  // its default voice's translator and the decoder, made once for all speakers
  ::signal(SIGCHLD, SIG_IGN);  // speakers that end are reaped by the kernel
  // One fork request at a time, until the server closes the socket (or dies: the same to us).
  std::string voice;
  while (ReadMessage(kTemplateFd, kMaxVoiceBytes, &voice)) {
    if (!HandOverSpeaker(voice)) break;
  }
  std::_Exit(0);
}

// Before main, in every process of a binary that links this file: a start of the executable
// meant as the template (EspeakSynthProcess::Start sets the variables) runs it and never
// returns; any other start goes on to main untouched.
[[gnu::constructor]] void RunTemplateIfAsked() {
  const char* fd = std::getenv(kTemplateFdVariable);
  if (fd == nullptr || std::atoi(fd) != kTemplateFd) return;
  const char* data_path = std::getenv(kDataPathVariable);
  RunTemplate(data_path != nullptr ? data_path : "");
}

// ---- The server's half.

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
  env.push_back(std::string(kDataPathVariable) + "=" + data_path);
  pid_t pid = 0;
  const int spawned =
      core::SpawnSelf({"voxserve-espeak-template"}, std::move(env), pair[1], kTemplateFd, &pid);
  ::close(pair[1]);
  if (spawned != 0) {
    ::close(pair[0]);
    errno = spawned;
    return Errno("posix_spawn");
  }
  return std::pair{pair[0], pid};
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

// Whether `fd` has something to read (or its peer closed it) before `deadline`.
bool AwaitReadable(int fd, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd readable{fd, POLLIN, 0};
    const int ready = ::poll(&readable, 1, static_cast<int>(std::max<int64_t>(left.count(), 0)));
    if (ready > 0) return true;
    if (ready == 0) return false;
    if (errno != EINTR) return true;  // the read that follows says what is wrong
  }
}

// Closes our socket to the template, kills it and reaps it.
void KillAndReap(int fd, pid_t pid) {
  if (fd >= 0) ::close(fd);
  if (pid <= 0) return;
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

// A speaker's reply past its first byte: "E" + message, or "K" + u32 pid + the samples and words;
// `trailing_zeros` silent samples follow the spoken ones.
absl::StatusOr<EspeakSynthProcess::Output> DecodeReply(std::string_view reply,
                                                       size_t trailing_zeros) {
  if (reply.empty()) return core::Internal("empty reply from espeak-ng's speaker process");
  if (reply[0] != 'K') return core::Internal(std::string(reply.substr(1)));
  Cursor in(reply.substr(1));
  uint32_t speaker = 0, count = 0, words = 0;
  std::string_view samples;
  EspeakSynthProcess::Output out;
  bool ok = in.U32(&speaker) && in.U32(&count) &&
            in.Bytes(static_cast<size_t>(count) * 2, &samples) && in.U32(&words);
  out.speaker = static_cast<pid_t>(speaker);
  if (ok) {
    out.samples.resize(count + trailing_zeros);
    audio::Pcm16LeToFloat(samples, out.samples.data());
  }
  for (uint32_t i = 0; ok && i < words; ++i) {
    uint32_t position = 0, length = 0, ms = 0;
    ok = in.U32(&position) && in.U32(&length) && in.U32(&ms);
    out.words.push_back(
        {static_cast<int>(position), static_cast<int>(length), static_cast<int>(ms)});
  }
  if (!ok || !in.done()) return core::Internal("malformed reply from espeak-ng's speaker process");
  return out;
}

}  // namespace

struct EspeakSynthProcess::Speaker {
  std::string voice;
  pid_t pid = 0;
  int fd = -1;         // ours alone: closing it ends the speaker
  bool ready = false;  // its first message (whether the voice was set) has been read
  uint64_t last_used = 0;
};

// One caller's speakers: one per recently used voice, the least recently used one closed when a
// new voice needs room. Used by one thread at a time (taken and given back whole).
class EspeakSynthProcess::Lane {
 public:
  Lane() = default;
  Lane(const Lane&) = delete;
  Lane& operator=(const Lane&) = delete;
  ~Lane() {
    for (const Speaker& speaker : speakers_) ::close(speaker.fd);
  }

  Speaker* Find(std::string_view voice) {
    for (Speaker& speaker : speakers_) {
      if (speaker.voice == voice) return &speaker;
    }
    return nullptr;
  }
  Speaker* Add(Speaker speaker) {
    if (speakers_.size() >= kMaxSpeakers) {
      Drop(&*std::min_element(speakers_.begin(), speakers_.end(), [](const auto& a, const auto& b) {
        return a.last_used < b.last_used;
      }));
    }
    speakers_.push_back(std::move(speaker));
    return &speakers_.back();
  }
  void Drop(Speaker* speaker) {  // it reads end-of-file (or fails its next write) and exits
    ::close(speaker->fd);
    speakers_.erase(speakers_.begin() + (speaker - speakers_.data()));
  }
  uint64_t Tick() { return ++clock_; }
  std::string& reply() { return reply_; }

 private:
  static constexpr size_t kMaxSpeakers = 4;
  std::vector<Speaker> speakers_;
  uint64_t clock_ = 0;
  std::string reply_;  // kept: a reply is as big as its audio, and pages faulted in cost
};

EspeakSynthProcess::EspeakSynthProcess(std::string data_path, std::chrono::milliseconds timeout,
                                       int fd, pid_t pid)
    : data_path_(std::move(data_path)), timeout_(timeout), fd_(fd), pid_(pid) {}

absl::StatusOr<std::unique_ptr<EspeakSynthProcess>> EspeakSynthProcess::Start(
    const std::string& data_path, std::chrono::milliseconds timeout) {
  auto spawned = SpawnTemplate(data_path);
  if (!spawned.ok()) return spawned.status();
  std::unique_ptr<EspeakSynthProcess> process(
      new EspeakSynthProcess(data_path, timeout, spawned->first, spawned->second));
  if (absl::Status ready = AwaitReady(process->fd_); !ready.ok()) return ready;
  return process;
}

EspeakSynthProcess::~EspeakSynthProcess() {
  idle_lanes_.clear();  // every speaker's socket closed
  std::lock_guard lock(template_mutex_);
  StopTemplate();
}

pid_t EspeakSynthProcess::pid() const {
  std::lock_guard lock(template_mutex_);
  return pid_;
}

void EspeakSynthProcess::StopTemplate() {
  KillAndReap(fd_, pid_);
  fd_ = -1;
  pid_ = 0;
}

absl::Status EspeakSynthProcess::RestartTemplate() {
  StopTemplate();
  auto spawned = SpawnTemplate(data_path_);
  if (!spawned.ok()) return spawned.status();
  fd_ = spawned->first;
  pid_ = spawned->second;
  if (absl::Status ready = AwaitReady(fd_); !ready.ok()) {
    StopTemplate();
    return ready;
  }
  return absl::OkStatus();
}

absl::StatusOr<EspeakSynthProcess::Speaker> EspeakSynthProcess::ForkSpeaker(
    const std::string& voice) {
  std::lock_guard lock(template_mutex_);
  // A template found gone (killed, or it died since the last fork) is started again and asked
  // once more.
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (fd_ < 0) {
      if (absl::Status restarted = RestartTemplate(); !restarted.ok()) return restarted;
    }
    std::string reply;
    int socket = -1;
    if (WriteMessage(fd_, voice) && ReadMessageWithFd(fd_, kMaxVoiceBytes, &reply, &socket)) {
      uint32_t pid = 0;
      if (socket >= 0 && reply.size() == 5 && reply[0] == 'K' &&
          Cursor(std::string_view(reply).substr(1)).U32(&pid)) {
        return Speaker{voice, static_cast<pid_t>(pid), socket};
      }
      if (socket >= 0) ::close(socket);
      if (!reply.empty() && reply[0] == 'E') {
        return core::Internal("espeak-ng's template process: " + reply.substr(1));
      }
    }
    StopTemplate();  // gone, or it said something we do not understand
  }
  return core::Internal("espeak-ng's template process died twice in a row");
}

std::unique_ptr<EspeakSynthProcess::Lane> EspeakSynthProcess::TakeLane() {
  {
    std::lock_guard lock(lanes_mutex_);
    if (!idle_lanes_.empty()) {
      std::unique_ptr<Lane> lane = std::move(idle_lanes_.back());
      idle_lanes_.pop_back();
      return lane;
    }
  }
  return std::make_unique<Lane>();
}

void EspeakSynthProcess::GiveBack(std::unique_ptr<Lane> lane) {
  ReleaseIfLarge(lane->reply());
  std::lock_guard lock(lanes_mutex_);
  idle_lanes_.push_back(std::move(lane));
}

absl::StatusOr<EspeakSynthProcess::Output> EspeakSynthProcess::Synthesize(std::string_view voice,
                                                                          int rate_wpm, int pitch,
                                                                          std::string_view text,
                                                                          size_t trailing_zeros) {
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
  if (voice.size() > kMaxVoiceBytes) return core::InvalidArgument("espeak-ng voice name too long");
  std::unique_ptr<Lane> lane = TakeLane();
  absl::StatusOr<Output> out = Speak(*lane, std::string(voice), request, trailing_zeros);
  GiveBack(std::move(lane));
  return out;
}

absl::StatusOr<EspeakSynthProcess::Output> EspeakSynthProcess::Speak(Lane& lane,
                                                                     const std::string& voice,
                                                                     const std::string& request,
                                                                     size_t trailing_zeros) {
  // A speaker found dead (killed between requests, or by this one) is replaced and asked once
  // more: a synthesis has no effect but its reply.
  std::string lost;
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  for (int attempt = 0; attempt < 2; ++attempt) {
    Speaker* speaker = lane.Find(voice);
    if (speaker == nullptr) {
      auto forked = ForkSpeaker(voice);
      if (!forked.ok()) return forked.status();
      speaker = lane.Add(*std::move(forked));
    }
    speaker->last_used = lane.Tick();
    if (!speaker->ready) {  // its voice is being set: the first message says how that went
      std::string ready;
      if (!ReadMessage(speaker->fd, 1 << 16, &ready) || ready.empty() || ready[0] != 'K') {
        lane.Drop(speaker);
        if (!ready.empty() && ready[0] == 'E') return core::Internal(ready.substr(1));
        lost = "before its voice was set";
        continue;
      }
      speaker->ready = true;
    }
    std::string& reply = lane.reply();
    if (!WriteMessage(speaker->fd, request)) {
      lane.Drop(speaker);
      lost = "before a synthesis";
      continue;
    }
    if (!AwaitReadable(speaker->fd, deadline)) {
      // A hang: not asked again. The speaker is alive, so its pid is still its own.
      ::kill(speaker->pid, SIGKILL);
      lane.Drop(speaker);
      return absl::DeadlineExceededError("espeak-ng's synthesis ran past synthesis_timeout_ms (" +
                                         std::to_string(timeout_.count()) + " ms)");
    }
    if (!ReadMessage(speaker->fd, kMaxReplyBytes + 1, &reply) || reply.empty()) {
      lane.Drop(speaker);
      lost = "during a synthesis";
      continue;
    }
    absl::StatusOr<Output> out = DecodeReply(std::string_view(reply).substr(1), trailing_zeros);
    if (reply[0] != kSpeakerStays || !out.ok()) {
      lane.Drop(speaker);  // it exits (or it said something we do not understand)
      // Its successor sets its voice while this reply travels on.
      if (auto successor = ForkSpeaker(voice); successor.ok()) {
        lane.Add(*std::move(successor))->last_used = lane.Tick();
      }
    }
    return out;
  }
  return core::Internal("espeak-ng's speaker process ended " + lost + ", twice in a row");
}

}  // namespace voxserve::engine
