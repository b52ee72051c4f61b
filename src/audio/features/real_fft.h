// Forward real-input DFT of one fixed size on FFTW3 (single precision).
#pragma once

#include <complex>
#include <memory>
#include <span>

#include "absl/status/statusor.h"

namespace voxserve::audio::features {

// Not thread-safe: one object per thread (each owns its plan and buffers). Creation is safe from
// any thread: FFTW's planner is not thread-safe, so Create plans under a process-wide mutex, and
// executing a plan on its own buffers (fftwf_execute) is thread-safe per FFTW's manual
// ("Thread safety"). Plans use FFTW_ESTIMATE: no timing runs, so planning is quick and the
// result does not depend on machine load.
class RealFft {
 public:
  static absl::StatusOr<std::unique_ptr<RealFft>> Create(int size);
  ~RealFft();
  RealFft(const RealFft&) = delete;
  RealFft& operator=(const RealFft&) = delete;

  int size() const { return size_; }
  int bins() const { return size_ / 2 + 1; }

  // The input frame, size() samples; fill it, then call Execute.
  std::span<float> input() { return {input_, static_cast<std::size_t>(size_)}; }
  // bins() complex values X[k] = sum_n x[n] exp(-2 pi i k n / size), valid after Execute.
  void Execute();
  std::span<const std::complex<float>> output() const {
    return {output_, static_cast<std::size_t>(bins())};
  }

 private:
  RealFft(int size, void* plan, float* input, std::complex<float>* output);

  int size_;
  void* plan_;                   // fftwf_plan, owned
  float* input_;                 // fftwf_malloc'd, owned
  std::complex<float>* output_;  // fftwf_malloc'd, owned (layout-compatible with fftwf_complex)
};

// Inverse of RealFft: bins() = size / 2 + 1 complex values in, size() real samples out,
// x[n] = sum_k X[k] exp(+2 pi i k n / size) over the Hermitian extension, unnormalised (FFTW's
// c2r: divide by size() for the inverse of RealFft). The imaginary parts of X[0] and, for an even
// size, X[size / 2] do not reach the output (as numpy/torch irfft). Same threading contract as
// RealFft.
class InverseRealFft {
 public:
  static absl::StatusOr<std::unique_ptr<InverseRealFft>> Create(int size);
  ~InverseRealFft();
  InverseRealFft(const InverseRealFft&) = delete;
  InverseRealFft& operator=(const InverseRealFft&) = delete;

  int size() const { return size_; }
  int bins() const { return size_ / 2 + 1; }

  // The input spectrum, bins() values; fill it, then call Execute (which overwrites it: FFTW's
  // c2r transforms destroy their input).
  std::span<std::complex<float>> input() { return {input_, static_cast<std::size_t>(bins())}; }
  void Execute();
  std::span<const float> output() const { return {output_, static_cast<std::size_t>(size_)}; }

 private:
  InverseRealFft(int size, void* plan, std::complex<float>* input, float* output);

  int size_;
  void* plan_;                  // fftwf_plan, owned
  std::complex<float>* input_;  // fftwf_malloc'd, owned
  float* output_;               // fftwf_malloc'd, owned
};

}  // namespace voxserve::audio::features
