// HiFT's STFT and iSTFT (cosyvoice/hifigan/generator.py:491-505): torch.stft / torch.istft with
// n_fft = win_length, centred (reflect padding of n_fft / 2), onesided, unnormalised, one window
// for both (the bundle's periodic Hann `hift_stft_window`). FFTs on FFTW (audio/features).
#pragma once

#include <span>
#include <vector>

#include "absl/status/statusor.h"

namespace voxserve::engine::cosyvoice {

// Immutable after Create; safe cross thread (each call plans its own small FFT; planning a
// 16-point FFTW_ESTIMATE plan costs microseconds).
class HiftStft {
 public:
  // n_fft >= 2 and even, 1 <= hop <= n_fft, window.size() == n_fft with the overlap-added
  // squared window non-zero (torch.istft's NOLA check), else InvalidArgument.
  static absl::StatusOr<HiftStft> Create(int n_fft, int hop, std::vector<float> window);

  int n_fft() const { return n_fft_; }
  int hop() const { return hop_; }
  int bins() const { return n_fft_ / 2 + 1; }
  // Frames of a centred STFT of `samples` samples: 1 + samples / hop.
  int64_t Frames(int64_t samples) const { return 1 + samples / hop_; }

  // torch.stft(x, n_fft, hop, n_fft, window, center=True, pad_mode="reflect",
  // return_complex=True) as HiFT feeds it to its decoder: [2 * bins, frames] row-major, the real
  // parts of bins 0..bins-1 first, then the imaginary parts (generator.py:508-509, cat on dim 1).
  // The signal must be longer than n_fft / 2 (reflect padding).
  absl::StatusOr<std::vector<float>> Forward(std::span<const float> samples) const;

  // torch.istft(complex(m cos p, m sin p), n_fft, hop, n_fft, window, center=True) with the
  // magnitude clipped at `max_magnitude` first (generator.py:500, 1e2): magnitude and phase are
  // [bins, frames] row-major. Returns hop * (frames - 1) samples: the overlap-added inverse
  // frames times the window, divided by the overlap-added squared window, the n_fft / 2 padding
  // cut from both ends.
  absl::StatusOr<std::vector<float>> Inverse(std::span<const float> magnitude,
                                             std::span<const float> phase, int64_t frames,
                                             float max_magnitude) const;

 private:
  HiftStft(int n_fft, int hop, std::vector<float> window)
      : n_fft_(n_fft), hop_(hop), window_(std::move(window)) {}

  int n_fft_;
  int hop_;
  std::vector<float> window_;
};

}  // namespace voxserve::engine::cosyvoice
