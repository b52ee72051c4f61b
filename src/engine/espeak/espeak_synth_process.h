// Each espeak-ng synthesis started from the same state every time, without a process start on
// the request path.
//
// libespeak-ng keeps synthesis state across calls that no API call resets (wavegen's phase and
// pitch flutter, a function-local static; the pause pending after a clause; rand() for breathy
// voices): the same text spoken after another one came out different, by tens of milliseconds
// (issue 29), while the espeak-ng command line, one process per run, always gives the same bytes.
// Forking a child per synthesis fixed that at 7-12 ms a request (issue 38). Here:
// - A template process holds a freshly initialized library and forks a *speaker* per recently
//   used voice (four at most). A speaker sets its voice once and copies the library's own
//   writable data (.data and .bss: every static in it, 165 KB) as its checkpoint.
// - Each request is spoken by its voice's speaker after the checkpoint is copied back and rand()
//   reseeded: the state a fresh speaker starts from, so identical requests give identical
//   samples in every process, whatever came before (tested against fresh processes).
// - The library's heap is not copied back, so a synthesis that keeps memory (a second language's
//   translator for a foreign word) would leave a pointer the checkpoint does not know. The
//   speaker sees it in the heap's in-use bytes, answers, and exits; the template forks the next
//   one for that voice at once. The answer is still the fresh state's answer.
//
// The template is this same executable (/proc/self/exe) started with the environment variable
// VOXSERVE_ESPEAK_TEMPLATE_FD, taken over before main by a constructor in the .cc: it works in
// every binary that links the engine (the server, its workers, the tests) and is single-threaded
// when it forks. It dies with its parent (PR_SET_PDEATHSIG, and at once when it finds its parent
// gone) and when its socket closes; each speaker dies with the template.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/espeak/espeak_word_events.h"

namespace voxserve::engine {

// One template process and the socket to it. Not thread-safe: its owner (EspeakEngine)
// serializes the calls; the template answers one synthesis at a time.
class EspeakSynthProcess {
 public:
  // Starts the template for `data_path` (an espeak-ng-data folder; empty = the library's
  // default) and waits for it to say the library is initialized. Internal when it cannot.
  static absl::StatusOr<std::unique_ptr<EspeakSynthProcess>> Start(const std::string& data_path);
  ~EspeakSynthProcess();  // closes the socket (the template exits) and reaps it

  EspeakSynthProcess(const EspeakSynthProcess&) = delete;
  EspeakSynthProcess& operator=(const EspeakSynthProcess&) = delete;

  struct Output {
    std::vector<float> samples;  // at the library's sample rate, in [-1, 1)
    std::vector<EspeakWordEvent> words;
    pid_t speaker = 0;  // the process that spoke it: the same one for a voice's requests (tests)
  };
  // One espeak_Synth of `text` (UTF-8) with the voice espeak_SetVoiceByName knows as `voice`
  // (its file identifier, with any "+variant") at `rate_wpm` and `pitch` (espeakPITCH, 0-100;
  // negative = the voice's own), by the voice's speaker. A template found
  // gone is started again and asked once more. Internal when the voice cannot be selected,
  // synthesis fails, the speaker dies, or the template cannot be (re)started.
  absl::StatusOr<Output> Synthesize(std::string_view voice, int rate_wpm, int pitch,
                                    std::string_view text);

  pid_t pid() const { return pid_; }  // the template's (0 while none runs); for tests

 private:
  EspeakSynthProcess(std::string data_path, int fd, pid_t pid)
      : data_path_(std::move(data_path)), fd_(fd), pid_(pid) {}
  absl::Status Restart();
  void Stop();

  const std::string data_path_;
  int fd_ = -1;  // our end of the socketpair; -1 once the template is gone
  pid_t pid_ = 0;
  std::string reply_;  // kept between calls: a reply is as big as its audio
};

}  // namespace voxserve::engine
