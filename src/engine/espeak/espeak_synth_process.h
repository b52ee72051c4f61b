// Each espeak-ng synthesis started from the same state every time, without a process start on
// the request path, and as many at once as there are callers.
//
// libespeak-ng keeps synthesis state across calls that no API call resets (wavegen's phase and
// pitch flutter, a function-local static; the pause pending after a clause; rand() for breathy
// voices): the same text spoken after another one came out different, by tens of milliseconds
// (issue 29), while the espeak-ng command line, one process per run, always gives the same bytes.
// Forking a child per synthesis fixed that at 7-12 ms a request (issue 38). Here:
// - A template process holds a freshly initialized library and forks *speakers* on request, one
//   voice each. A speaker sets its voice once and copies the library's own writable data (.data
//   and .bss: every static in it, 165 KB) as its checkpoint. The template hands the speaker's
//   socket to this process (SCM_RIGHTS), which talks to the speaker directly from then on: a
//   request crosses one process boundary, not two.
// - Each request is spoken by its voice's speaker after the checkpoint is copied back and rand()
//   reseeded: the state a fresh speaker starts from, so identical requests give identical
//   samples in every process, whatever came before (tested against fresh processes).
// - Callers run in parallel, each on a *lane*: the speakers (four voices at most, least recently
//   used first out) one caller at a time uses. A lane is taken for one synthesis and given back;
//   there are as many as callers ever ran at once (the scheduler's instances bound that).
// - The library's heap is not copied back, so a synthesis that keeps memory (a second language's
//   translator for a foreign word) would leave a pointer the checkpoint does not know. The
//   speaker sees it in the heap's in-use bytes, answers, and exits; its successor is forked at
//   once and sets its voice while the answer travels. The answer is still the fresh state's.
//
// The template is this same executable (/proc/self/exe) started with the environment variable
// VOXSERVE_ESPEAK_TEMPLATE_FD, taken over before main by a constructor in the .cc: it works in
// every binary that links the engine (the server, its workers, the tests) and is single-threaded
// when it forks (libespeak-ng's idle queue thread aside, which a fork does not copy). Every process
// here ends when the socket to it closes: the template when this process closes it or dies (not
// PR_SET_PDEATHSIG, which fires when the *thread* that spawned it ends: the loading thread), a
// speaker when its lane drops it or this process dies. The template reaps its speakers.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/espeak/espeak_word_events.h"

namespace voxserve::engine {

// One template process, the socket to it, and the lanes of speakers it forked. Thread-safe:
// syntheses from different threads run at once on different lanes; forks are serialized.
class EspeakSynthProcess {
 public:
  // Starts the template for `data_path` (an espeak-ng-data folder; empty = the library's
  // default) and waits for it to say the library is initialized. Internal when it cannot.
  // A synthesis whose speaker has not answered within `timeout` is ended: the speaker is killed
  // (a hang in the library costs that request, not the caller's thread) and the answer is
  // DeadlineExceeded.
  static absl::StatusOr<std::unique_ptr<EspeakSynthProcess>> Start(
      const std::string& data_path,
      std::chrono::milliseconds timeout = std::chrono::milliseconds(30'000));
  ~EspeakSynthProcess();  // closes every socket (speakers and template exit) and reaps the template

  EspeakSynthProcess(const EspeakSynthProcess&) = delete;
  EspeakSynthProcess& operator=(const EspeakSynthProcess&) = delete;

  struct Output {
    std::vector<float> samples;  // at the library's sample rate, in [-1, 1)
    std::vector<EspeakWordEvent> words;
    pid_t speaker = 0;  // the process that spoke it: the same one for a voice's requests (tests)
  };
  // One espeak_Synth of `text` (UTF-8) with the voice espeak_SetVoiceByName knows as `voice`
  // (its file identifier, with any "+variant") at `rate_wpm` and `pitch` (espeakPITCH, 0-100;
  // negative = the voice's own), by the voice's speaker on a free lane. A speaker found dead is
  // replaced and asked once more; a template found gone when a speaker is needed is started
  // again. Internal when the voice cannot be selected, synthesis fails, or no process can be
  // (re)started; DeadlineExceeded past the timeout. `trailing_zeros` silent samples are
  // appended to the samples (the engine's pause after a segment, without a second copy).
  absl::StatusOr<Output> Synthesize(std::string_view voice, int rate_wpm, int pitch,
                                    std::string_view text, size_t trailing_zeros = 0);

  pid_t pid() const;  // the template's (0 while none runs); for tests

  struct Speaker;  // a speaker's socket and voice (the .cc)
  class Lane;      // one caller's speakers (the .cc)

 private:
  EspeakSynthProcess(std::string data_path, std::chrono::milliseconds timeout, int fd, pid_t pid);
  // A new speaker for `voice`, its voice still being set: the template forks it and hands over
  // its socket. A template found gone is started again once.
  absl::StatusOr<Speaker> ForkSpeaker(const std::string& voice);
  absl::Status RestartTemplate();  // with template_mutex_ held
  void StopTemplate();             // with template_mutex_ held
  // The synthesis on `lane`; `request` is the speaker's request for it.
  absl::StatusOr<Output> Speak(Lane& lane, const std::string& voice, const std::string& request,
                               size_t trailing_zeros);
  std::unique_ptr<Lane> TakeLane();
  void GiveBack(std::unique_ptr<Lane> lane);

  const std::string data_path_;
  const std::chrono::milliseconds timeout_;
  mutable std::mutex template_mutex_;  // guards fd_ and pid_: one fork request at a time
  int fd_ = -1;                        // our end of the socketpair; -1 once the template is gone
  pid_t pid_ = 0;
  std::mutex lanes_mutex_;
  std::vector<std::unique_ptr<Lane>> idle_lanes_;  // the last given back is taken first
};

}  // namespace voxserve::engine
