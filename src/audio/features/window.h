// Analysis windows, defined exactly as torch defines them (the oracles the features match).
#pragma once

#include <vector>

namespace voxserve::audio::features {

// torch.hann_window(length, periodic): 0.5 - 0.5 cos(2 pi n / N), N = length when periodic
// (the DFT-even window torch.stft users pass by default) and length - 1 when symmetric.
std::vector<float> HannWindow(int length, bool periodic);

// Kaldi's "povey" window, torchaudio.compliance.kaldi._feature_window_function:
// the symmetric Hann window raised to the power 0.85.
std::vector<float> PoveyWindow(int length);

}  // namespace voxserve::audio::features
