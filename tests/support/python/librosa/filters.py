"""librosa.filters.mel, re-derived (see __init__.py). Only htk=False and norm="slaney"."""
import numpy as np

_HZ_PER_MEL = 200.0 / 3.0
_LOG_START_HZ = 1000.0
_LOG_START_MEL = _LOG_START_HZ / _HZ_PER_MEL
_LOG_STEP = np.log(6.4) / 27.0


def _hz_to_mel(hz):
    hz = np.asanyarray(hz, dtype=np.float64)
    return np.where(hz >= _LOG_START_HZ,
                    _LOG_START_MEL + np.log(np.maximum(hz, 1e-300) / _LOG_START_HZ) / _LOG_STEP,
                    hz / _HZ_PER_MEL)


def _mel_to_hz(mel):
    mel = np.asanyarray(mel, dtype=np.float64)
    return np.where(mel >= _LOG_START_MEL,
                    _LOG_START_HZ * np.exp(_LOG_STEP * (mel - _LOG_START_MEL)),
                    mel * _HZ_PER_MEL)


def mel(*, sr, n_fft, n_mels=128, fmin=0.0, fmax=None, htk=False, norm="slaney",
        dtype=np.float32):
    if htk or norm != "slaney":
        raise NotImplementedError("the librosa stand-in only builds Slaney filters")
    if fmax is None:
        fmax = sr / 2.0
    fft_freqs = np.arange(n_fft // 2 + 1, dtype=np.float64) * sr / n_fft
    edges = _mel_to_hz(np.linspace(_hz_to_mel(fmin), _hz_to_mel(fmax), n_mels + 2))
    widths = np.diff(edges)
    ramps = edges[:, None] - fft_freqs[None, :]
    weights = np.zeros((n_mels, len(fft_freqs)), dtype=np.float64)
    for i in range(n_mels):
        lower = -ramps[i] / widths[i]
        upper = ramps[i + 2] / widths[i + 1]
        weights[i] = np.maximum(0.0, np.minimum(lower, upper))
    weights *= (2.0 / (edges[2:n_mels + 2] - edges[:n_mels]))[:, None]
    return weights.astype(dtype)
