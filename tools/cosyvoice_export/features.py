"""Prompt feature extraction as upstream's frontend does it (cosyvoice/cli/frontend.py:95-125),
for the goldens. kaldi.fbank is torchaudio's, as upstream calls it; Whisper's log-mel and
Matcha's mel_spectrogram come from packages Debian lacks (openai-whisper, matcha.utils), so they
are written here from their published definitions:
- whisper/audio.py log_mel_spectrogram: n_fft 400, hop 160, Hann, |STFT|^2 without the last frame,
  Slaney mel filters (librosa's, which torchaudio's melscale_fbanks reproduces with
  norm/mel_scale "slaney"), log10(max(., 1e-10)), floor at max - 8, then (x + 4) / 4.
- matcha/utils/audio.py mel_spectrogram (reference/model-interfaces.md 3.5): reflect-pad
  (n_fft - hop) / 2, center=False, sqrt(re^2 + im^2 + 1e-9), Slaney mel, log(clamp(., 1e-5)).
"""
import torch
import torchaudio
import torchaudio.compliance.kaldi as kaldi


def kaldi_fbank(wav16k):
    """wav [N] float at 16 kHz -> mean-normalised fbank [T, 80] (frontend.py:110-114)."""
    feat = kaldi.fbank(wav16k.unsqueeze(0), num_mel_bins=80, dither=0, sample_frequency=16000)
    return feat - feat.mean(dim=0, keepdim=True)


def _slaney_mel(n_fft, n_mels, sample_rate, fmin, fmax):
    return torchaudio.functional.melscale_fbanks(
        n_fft // 2 + 1, fmin, fmax, n_mels, sample_rate, norm="slaney", mel_scale="slaney")


def whisper_log_mel(wav16k, n_mels=128):
    """wav [N] at 16 kHz -> [128, N // 160] (whisper.log_mel_spectrogram)."""
    window = torch.hann_window(400)
    stft = torch.stft(wav16k, 400, 160, window=window, return_complex=True)
    power = stft[..., :-1].abs() ** 2
    mel = _slaney_mel(400, n_mels, 16000, 0.0, 8000.0).T @ power
    log_spec = torch.clamp(mel, min=1e-10).log10()
    log_spec = torch.maximum(log_spec, log_spec.max() - 8.0)
    return (log_spec + 4.0) / 4.0


def prompt_mel(wav24k, n_fft=1920, hop=480, win=1920, n_mels=80, fmin=0.0, fmax=8000.0):
    """wav [N] at 24 kHz -> [T, 80] at 50 frames per second (frontend.py:120-125)."""
    pad = (n_fft - hop) // 2
    y = torch.nn.functional.pad(wav24k.view(1, 1, -1), (pad, pad), mode="reflect").view(-1)
    spec = torch.stft(y, n_fft, hop, win, window=torch.hann_window(win), center=False,
                      return_complex=True)
    mag = torch.sqrt(spec.real ** 2 + spec.imag ** 2 + 1e-9)
    mel = _slaney_mel(n_fft, n_mels, 24000, fmin, fmax).T @ mag
    return torch.log(torch.clamp(mel, min=1e-5)).T


def resample(wav, from_rate, to_rate):
    return torchaudio.transforms.Resample(from_rate, to_rate)(wav.unsqueeze(0)).squeeze(0)
