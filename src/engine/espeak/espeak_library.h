// The one libespeak-ng of the process, shared by the espeak engine (synthesis) and the espeak
// phonemizer (text → IPA for the ONNX voices).
#pragma once

#include <mutex>
#include <string>

#include "absl/status/statusor.h"

namespace voxserve::engine {

// libespeak-ng keeps one global state per process (selected voice, rate, synth callback, the
// look-ahead of espeak_TextToPhonemes), so every call into it, from any module, is made while
// holding Lock(). The library is initialized on first Acquire and never terminated:
// espeak_Terminate followed by a second espeak_Initialize deadlocks in 1.51 (its internal thread
// waits forever). Safe cross thread; lives until the process exits.
class EspeakLibrary {
 public:
  // Initializes libespeak-ng with `data_path` (an espeak-ng-data folder; empty = the library's
  // built-in default) on first use. Later calls accept an empty path or the same path; another
  // path fails, because one process can use only one data folder.
  static absl::StatusOr<EspeakLibrary*> Acquire(const std::string& data_path);

  // Held around every call into libespeak-ng.
  [[nodiscard]] std::unique_lock<std::mutex> Lock() { return std::unique_lock(mutex_); }

  int sample_rate() const { return sample_rate_; }  // of espeak_Synth output (22050 in 1.51)
  const std::string& data_path() const { return data_path_; }

 private:
  EspeakLibrary(int sample_rate, std::string data_path)
      : sample_rate_(sample_rate), data_path_(std::move(data_path)) {}

  std::mutex mutex_;
  const int sample_rate_;
  const std::string data_path_;
};

}  // namespace voxserve::engine
