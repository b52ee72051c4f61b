// Streaming sample-rate conversion of one mono stream with libsoxr.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Opaque libsoxr handle (soxr.h: typedef struct soxr* soxr_t), declared here so the header does
// not pull soxr.h into every includer.
struct soxr;

namespace voxserve::audio {

// Not thread-safe; owned by one encoder. soxr holds back about one filter length of input (its
// delay) until more arrives or Flush is called, so the total output after Flush is
// input length x output_rate / input_rate.
class Resampler {
 public:
  static absl::StatusOr<std::unique_ptr<Resampler>> Create(int input_rate, int output_rate);
  ~Resampler();
  Resampler(const Resampler&) = delete;
  Resampler& operator=(const Resampler&) = delete;

  // Appends to *out the output that `samples` make ready.
  absl::Status Process(std::span<const float> samples, std::vector<float>* out);
  // Ends the input and appends the rest of the output. Process is invalid afterwards.
  absl::Status Flush(std::vector<float>* out);

 private:
  Resampler(soxr* handle, double ratio);

  soxr* soxr_;    // owned
  double ratio_;  // output_rate / input_rate
  bool flushed_ = false;
};

// The whole of `samples` converted from input_rate to output_rate in one go (Create, Process,
// Flush): about size x output_rate / input_rate samples, aligned with the input (soxr
// compensates its own delay). Equal rates return a copy. Thread-safe.
absl::StatusOr<std::vector<float>> ResampleAll(std::span<const float> samples, int input_rate,
                                               int output_rate);

}  // namespace voxserve::audio
