// Each espeak-ng synthesis in a process of its own, started from the same state every time.
//
// libespeak-ng keeps synthesis state across calls that no API call resets (wavegen's phase,
// pitch flutter and gain, the pause pending after a clause, rand() for breathy voices): the
// same text spoken after another one came out different, by tens of milliseconds (issue 29),
// while the espeak-ng command line, one process per run, always gives the same bytes. So every
// synthesis here runs as the command line's does: in a child forked from a template process that
// holds a freshly initialized library and never synthesizes itself, so each child starts from
// exactly that state, and identical requests give identical samples in every process.
//
// The template is this same executable (/proc/self/exe) started with the environment variable
// VOXSERVE_ESPEAK_TEMPLATE_FD, taken over before main by a constructor in the .cc: it works in
// every binary that links the engine (the server, its workers, the tests) and is single-threaded
// when it forks. It dies with its parent (PR_SET_PDEATHSIG, and at once when it finds its parent
// gone) and when its socket closes; each child dies with the template.
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
  };
  // One espeak_Synth of `text` (UTF-8) with the voice espeak_SetVoiceByName knows as `voice`
  // (its file identifier, with any "+variant") at `rate_wpm` and `pitch` (espeakPITCH, 0-100;
  // negative = the voice's own), in a fresh child. A template found
  // gone is started again and asked once more. Internal when the voice cannot be selected,
  // synthesis fails, the child dies, or the template cannot be (re)started.
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
};

}  // namespace voxserve::engine
