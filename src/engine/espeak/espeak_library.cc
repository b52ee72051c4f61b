#include "engine/espeak/espeak_library.h"

#include <espeak-ng/speak_lib.h>

#include "core/error.h"

namespace voxserve::engine {

absl::StatusOr<EspeakLibrary*> EspeakLibrary::Acquire(const std::string& data_path) {
  static std::mutex init_mutex;
  static EspeakLibrary* library = nullptr;  // never deleted: see the class comment
  std::lock_guard lock(init_mutex);
  if (library == nullptr) {
    const char* path = data_path.empty() ? nullptr : data_path.c_str();
    int sample_rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, path, 0);
    if (sample_rate <= 0) {
      return core::Internal("espeak-ng failed to initialize (data path '" + data_path + "')");
    }
    library = new EspeakLibrary(sample_rate, data_path);
  } else if (!data_path.empty() && data_path != library->data_path()) {
    return core::InvalidArgument("espeak-ng is already initialized with data path '" +
                                 library->data_path() + "'; one process uses one data path");
  }
  return library;
}

}  // namespace voxserve::engine
