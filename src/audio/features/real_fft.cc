#include "audio/features/real_fft.h"

#include <fftw3.h>

#include <mutex>

#include "absl/strings/str_cat.h"
#include "core/error.h"

namespace voxserve::audio::features {
namespace {

// A far larger frame than any feature here uses (the largest is 1920); bounds what a caller's
// size can allocate.
constexpr int kMaxSize = 1 << 20;

std::mutex& PlannerMutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace

absl::StatusOr<std::unique_ptr<RealFft>> RealFft::Create(int size) {
  if (size < 2 || size > kMaxSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("FFT size must be in [2, ", kMaxSize, "], got ", size));
  }
  auto* input = static_cast<float*>(fftwf_malloc(sizeof(float) * size));
  auto* output = static_cast<fftwf_complex*>(fftwf_malloc(sizeof(fftwf_complex) * (size / 2 + 1)));
  fftwf_plan plan = nullptr;
  if (input != nullptr && output != nullptr) {
    std::lock_guard<std::mutex> lock(PlannerMutex());
    plan = fftwf_plan_dft_r2c_1d(size, input, output, FFTW_ESTIMATE);
  }
  if (plan == nullptr) {
    fftwf_free(input);
    fftwf_free(output);
    return core::Internal(absl::StrCat("FFTW could not plan a real FFT of size ", size));
  }
  // std::complex<float> and fftwf_complex (float[2]) share their layout (C++ [complex.numbers]).
  return std::unique_ptr<RealFft>(
      new RealFft(size, plan, input, reinterpret_cast<std::complex<float>*>(output)));
}

RealFft::RealFft(int size, void* plan, float* input, std::complex<float>* output)
    : size_(size), plan_(plan), input_(input), output_(output) {}

RealFft::~RealFft() {
  {
    // fftwf_destroy_plan touches the planner's shared state as well.
    std::lock_guard<std::mutex> lock(PlannerMutex());
    fftwf_destroy_plan(static_cast<fftwf_plan>(plan_));
  }
  fftwf_free(input_);
  fftwf_free(output_);
}

void RealFft::Execute() { fftwf_execute(static_cast<fftwf_plan>(plan_)); }

absl::StatusOr<std::unique_ptr<InverseRealFft>> InverseRealFft::Create(int size) {
  if (size < 2 || size > kMaxSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("FFT size must be in [2, ", kMaxSize, "], got ", size));
  }
  auto* input = static_cast<fftwf_complex*>(fftwf_malloc(sizeof(fftwf_complex) * (size / 2 + 1)));
  auto* output = static_cast<float*>(fftwf_malloc(sizeof(float) * size));
  fftwf_plan plan = nullptr;
  if (input != nullptr && output != nullptr) {
    std::lock_guard<std::mutex> lock(PlannerMutex());
    plan = fftwf_plan_dft_c2r_1d(size, input, output, FFTW_ESTIMATE);
  }
  if (plan == nullptr) {
    fftwf_free(input);
    fftwf_free(output);
    return core::Internal(absl::StrCat("FFTW could not plan an inverse real FFT of size ", size));
  }
  return std::unique_ptr<InverseRealFft>(
      new InverseRealFft(size, plan, reinterpret_cast<std::complex<float>*>(input), output));
}

InverseRealFft::InverseRealFft(int size, void* plan, std::complex<float>* input, float* output)
    : size_(size), plan_(plan), input_(input), output_(output) {}

InverseRealFft::~InverseRealFft() {
  {
    std::lock_guard<std::mutex> lock(PlannerMutex());
    fftwf_destroy_plan(static_cast<fftwf_plan>(plan_));
  }
  fftwf_free(input_);
  fftwf_free(output_);
}

void InverseRealFft::Execute() {
  // FFTW's c2r reads only the Hermitian half and does not promise what non-zero imaginary parts
  // of the DC and Nyquist bins do; torch.istft (pocketfft) drops them, so drop them here too.
  input_[0].imag(0.0f);
  if (size_ % 2 == 0) input_[size_ / 2].imag(0.0f);
  fftwf_execute(static_cast<fftwf_plan>(plan_));
}

}  // namespace voxserve::audio::features
