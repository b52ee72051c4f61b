"""Stand-in for `matcha.utils.audio.mel_spectrogram`, which cosyvoice2.yaml:150-158 binds as the
frontend's feat_extractor (n_fft 1920, num_mels 80, sampling_rate 24000, hop 480, win 1920,
fmin 0, fmax 8000, center False). The oracle copy of Matcha-TTS holds matcha/models/components
only (shared/oracles/README.md), so when the real module cannot be imported the test uses this,
written by us from Matcha's definition (reference/model-interfaces.md 3.5): reflect-pad the
signal by (n_fft - hop) / 2 on both sides, torch.stft with center=False and a periodic Hann
window, magnitude sqrt(re^2 + im^2 + 1e-9), Slaney mel filters from librosa.filters.mel (the
librosa stand-in of tests/support/python), log(clamp(., 1e-5)). Not Matcha's code."""
import numpy as np
import torch

from librosa.filters import mel as _librosa_mel


def mel_spectrogram(y, n_fft, num_mels, sampling_rate, hop_size, win_size, fmin, fmax,
                    center=False):
    """y: [batch, samples] -> [batch, num_mels, frames]."""
    basis = torch.from_numpy(np.asarray(
        _librosa_mel(sr=sampling_rate, n_fft=n_fft, n_mels=num_mels, fmin=fmin, fmax=fmax),
        dtype=np.float32))
    pad = int((n_fft - hop_size) / 2)
    y = torch.nn.functional.pad(y.unsqueeze(1), (pad, pad), mode="reflect").squeeze(1)
    spec = torch.stft(y, n_fft, hop_length=hop_size, win_length=win_size,
                      window=torch.hann_window(win_size), center=center, pad_mode="reflect",
                      normalized=False, onesided=True, return_complex=True)
    magnitude = torch.sqrt(spec.real ** 2 + spec.imag ** 2 + 1e-9)
    return torch.log(torch.clamp(basis @ magnitude, min=1e-5))
