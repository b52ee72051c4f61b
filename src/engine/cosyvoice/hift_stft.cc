#include "engine/cosyvoice/hift_stft.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <string>

#include "audio/features/real_fft.h"
#include "audio/features/stft.h"
#include "core/error.h"

namespace voxserve::engine::cosyvoice {

absl::StatusOr<HiftStft> HiftStft::Create(int n_fft, int hop, std::vector<float> window) {
  if (n_fft < 2 || n_fft % 2 != 0) {
    return core::InvalidArgument("HiFT n_fft must be even and >= 2, got " + std::to_string(n_fft));
  }
  if (hop < 1 || hop > n_fft) {
    return core::InvalidArgument("HiFT hop must be in [1, n_fft], got " + std::to_string(hop));
  }
  if (window.size() != static_cast<size_t>(n_fft)) {
    return core::InvalidArgument("HiFT STFT window has " + std::to_string(window.size()) +
                                 " values, n_fft is " + std::to_string(n_fft));
  }
  // Steady-state overlap-add of window^2 at each phase of the hop: torch.istft refuses a window
  // whose envelope vanishes anywhere (NOLA), as the division below would.
  for (int phase = 0; phase < hop; ++phase) {
    double envelope = 0;
    for (int i = phase; i < n_fft; i += hop) envelope += double(window[i]) * window[i];
    if (envelope < 1e-11) {
      return core::InvalidArgument(
          "HiFT STFT window fails the overlap-add condition (NOLA) at hop " + std::to_string(hop));
    }
  }
  return HiftStft(n_fft, hop, std::move(window));
}

absl::StatusOr<std::vector<float>> HiftStft::Forward(std::span<const float> samples) const {
  const int half = n_fft_ / 2;
  if (samples.size() <= static_cast<size_t>(half)) {
    return core::InvalidArgument("HiFT STFT needs more than " + std::to_string(half) +
                                 " samples (reflect padding), got " +
                                 std::to_string(samples.size()));
  }
  auto padded = audio::features::ReflectPad(samples, half, half);
  if (!padded.ok()) return padded.status();
  auto fft = audio::features::RealFft::Create(n_fft_);
  if (!fft.ok()) return fft.status();
  const int64_t frames = Frames(static_cast<int64_t>(samples.size()));
  const int nb = bins();
  std::vector<float> out(static_cast<size_t>(2 * nb * frames));
  for (int64_t t = 0; t < frames; ++t) {
    std::span<float> in = (*fft)->input();
    for (int i = 0; i < n_fft_; ++i) in[i] = (*padded)[t * hop_ + i] * window_[i];
    (*fft)->Execute();
    std::span<const std::complex<float>> spectrum = (*fft)->output();
    for (int k = 0; k < nb; ++k) {
      out[k * frames + t] = spectrum[k].real();
      out[(nb + k) * frames + t] = spectrum[k].imag();
    }
  }
  return out;
}

absl::StatusOr<std::vector<float>> HiftStft::Inverse(std::span<const float> magnitude,
                                                     std::span<const float> phase, int64_t frames,
                                                     float max_magnitude) const {
  const int nb = bins();
  if (frames < 1 || magnitude.size() != static_cast<size_t>(nb * frames) ||
      phase.size() != magnitude.size()) {
    return core::InvalidArgument("HiFT iSTFT wants magnitude and phase of [" + std::to_string(nb) +
                                 ", frames >= 1], got " + std::to_string(magnitude.size()) +
                                 " and " + std::to_string(phase.size()) + " values for " +
                                 std::to_string(frames) + " frames");
  }
  auto ifft = audio::features::InverseRealFft::Create(n_fft_);
  if (!ifft.ok()) return ifft.status();
  const int64_t full = n_fft_ + hop_ * (frames - 1);
  std::vector<double> sum(static_cast<size_t>(full), 0.0), envelope(static_cast<size_t>(full), 0.0);
  const float scale = 1.0f / static_cast<float>(n_fft_);  // irfft's 1/N (norm="backward")
  for (int64_t t = 0; t < frames; ++t) {
    std::span<std::complex<float>> in = (*ifft)->input();
    for (int k = 0; k < nb; ++k) {
      // torch.clip(magnitude, max=1e2) leaves NaN as NaN; std::min would too only by argument
      // order.
      float m = magnitude[k * frames + t];
      if (m > max_magnitude) m = max_magnitude;
      float p = phase[k * frames + t];
      in[k] = {m * std::cos(p), m * std::sin(p)};
    }
    (*ifft)->Execute();
    std::span<const float> frame = (*ifft)->output();
    for (int i = 0; i < n_fft_; ++i) {
      sum[t * hop_ + i] += double(frame[i] * scale) * window_[i];
      envelope[t * hop_ + i] += double(window_[i]) * window_[i];
    }
  }
  const int half = n_fft_ / 2;
  std::vector<float> out(static_cast<size_t>(full - 2 * half));
  for (size_t i = 0; i < out.size(); ++i) {
    if (envelope[i + half] < 1e-11) {  // torch.istft's NOLA bound
      return core::InvalidArgument("HiFT iSTFT: the window envelope vanishes at sample " +
                                   std::to_string(i));
    }
    out[i] = static_cast<float>(sum[i + half] / envelope[i + half]);
  }
  return out;
}

}  // namespace voxserve::engine::cosyvoice
