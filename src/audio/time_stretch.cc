#include "audio/time_stretch.h"

#include <sonic.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/error.h"

namespace voxserve::audio {
namespace {

struct SonicStreamDeleter {
  void operator()(sonicStreamStruct* stream) const { sonicDestroyStream(stream); }
};

// Sonic is fed and drained in blocks so its internal buffers stay small for long inputs.
constexpr int kBlockSamples = 4096;

// Appends everything sonic has ready to *out.
void Drain(sonicStream stream, std::vector<float>* out) {
  while (int available = sonicSamplesAvailable(stream)) {
    std::size_t start = out->size();
    out->resize(start + static_cast<std::size_t>(available));
    int read = sonicReadFloatFromStream(stream, out->data() + start, available);
    out->resize(start + static_cast<std::size_t>(std::max(read, 0)));
    if (read <= 0) return;
  }
}

}  // namespace

absl::StatusOr<PcmAudio> TimeStretch(const PcmAudio& audio, double speed) {
  if (!std::isfinite(speed) || speed <= 0.0) {
    return core::InvalidArgument(
        absl::StrCat("speed must be a finite number greater than 0, got ", speed), "speed");
  }
  if (audio.sample_rate <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("audio sample_rate must be positive, got ", audio.sample_rate));
  }
  if (speed == 1.0 || audio.samples.empty()) return audio;

  std::unique_ptr<sonicStreamStruct, SonicStreamDeleter> stream(
      sonicCreateStream(audio.sample_rate, 1));
  if (stream == nullptr) return core::Internal("libsonic: cannot create a stream");
  sonicSetSpeed(stream.get(), static_cast<float>(speed));

  PcmAudio stretched;
  stretched.sample_rate = audio.sample_rate;
  stretched.samples.reserve(static_cast<std::size_t>(audio.samples.size() / speed) + kBlockSamples);
  for (std::size_t offset = 0; offset < audio.samples.size(); offset += kBlockSamples) {
    int count =
        static_cast<int>(std::min<std::size_t>(kBlockSamples, audio.samples.size() - offset));
    // sonic copies the samples in; its parameter merely lacks const.
    float* block = const_cast<float*>(audio.samples.data() + offset);
    if (!sonicWriteFloatToStream(stream.get(), block, count)) {
      return core::Internal("libsonic: out of memory while stretching");
    }
    Drain(stream.get(), &stretched.samples);
  }
  if (!sonicFlushStream(stream.get())) {
    return core::Internal("libsonic: out of memory while flushing");
  }
  Drain(stream.get(), &stretched.samples);
  // The words keep their place in the speech: their times stretch with it. The measured ratio
  // (not 1/speed) keeps them inside the audio whatever sonic's flush added.
  stretched.timings = audio.timings;
  stretched.words = audio.words;
  ScaleWordTimes(stretched.words, static_cast<double>(stretched.samples.size()) /
                                      static_cast<double>(audio.samples.size()));
  return stretched;
}

}  // namespace voxserve::audio
