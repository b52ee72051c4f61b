"""Stand-in for openai-whisper's `whisper.log_mel_spectrogram`, the one whisper function upstream's
CosyVoice frontend calls (cosyvoice/cli/frontend.py:98, with n_mels=128). openai-whisper is not
packaged for Debian (and Debian's python3-whisper is Graphite's database, another package).
Written by us from whisper's published algorithm (openai/whisper, whisper/audio.py,
log_mel_spectrogram): 16 kHz audio, n_fft 400, hop 160, periodic Hann window, torch.stft
(center=True, reflect padding), power spectrum with the last frame dropped, Slaney mel filters
(whisper's mel_filters.npz holds librosa.filters.mel(sr=16000, n_fft=400, n_mels=...); here the
librosa stand-in of tests/support/python builds them), log10 of max(., 1e-10), floored at
(max - 8), then (x + 4) / 4. Not whisper's code."""
import numpy as np
import torch

from librosa.filters import mel as _librosa_mel  # tests/support/python/librosa (stand-in)

from . import tokenizer  # noqa: F401  (cosyvoice/tokenizer/tokenizer.py imports it)

SAMPLE_RATE, N_FFT, HOP_LENGTH = 16000, 400, 160


def mel_filters(device, n_mels):
    filters = _librosa_mel(sr=SAMPLE_RATE, n_fft=N_FFT, n_mels=n_mels)
    return torch.from_numpy(np.asarray(filters, dtype=np.float32)).to(device)


def log_mel_spectrogram(audio, n_mels=80, padding=0, device=None):
    """audio: tensor [..., samples] at 16 kHz (or ndarray) -> [..., n_mels, samples // 160]."""
    if not torch.is_tensor(audio):
        audio = torch.from_numpy(np.asarray(audio, dtype=np.float32))
    if device is not None:
        audio = audio.to(device)
    if padding > 0:
        audio = torch.nn.functional.pad(audio, (0, padding))
    window = torch.hann_window(N_FFT).to(audio.device)
    stft = torch.stft(audio, N_FFT, HOP_LENGTH, window=window, return_complex=True)
    magnitudes = stft[..., :-1].abs() ** 2
    mel_spec = mel_filters(audio.device, n_mels) @ magnitudes
    log_spec = torch.clamp(mel_spec, min=1e-10).log10()
    log_spec = torch.maximum(log_spec, log_spec.max() - 8.0)
    return (log_spec + 4.0) / 4.0
