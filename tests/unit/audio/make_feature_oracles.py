#!/usr/bin/python3
"""Writes the inputs and the expected outputs of the audio feature tests (features_test.cc).

Run by CTest (fixture feature_oracles) with Debian's /usr/bin/python3: torch 1.13, torchaudio
0.13, numpy, soundfile. Every expected array comes from the library the C++ code must agree
with, on the same input:
  - STFT: torch.stft; mel filters: torchaudio.functional.melscale_fbanks (Slaney) and
    torchaudio.compliance.kaldi.get_mel_banks;
  - Kaldi fbank: torchaudio.compliance.kaldi.fbank(num_mel_bins=80, dither=0,
    sample_frequency=16000), as cosyvoice/cli/frontend.py:110 calls it;
  - Whisper log-mel: openai-whisper is not packaged for Debian, so whisper.audio.
    log_mel_spectrogram's steps are replayed here in torch (torch.stft, Slaney filters, log10,
    max - 8, (x + 4) / 4; see whisper_log_mel() below);
  - 24 kHz prompt mel: Matcha's matcha.utils.audio.mel_spectrogram, imported from the oracle
    checkout when VOXSERVE_COSYVOICE_REF (or VOXSERVE_MATCHA_REF) leads to it, with the librosa
    stand-in of tests/support/python; else the same steps replayed in torch (the copy in
    shared/oracles/Matcha-TTS holds matcha/models only). matcha_source.txt says which ran.
  - resampling: torchaudio.transforms.Resample (what load_wav uses).
Each array is written as <name>.f32: int32 rows, int32 cols, then rows*cols float32 (little
endian, row-major).
"""
import argparse
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import soundfile
try:
    import torch
    import torchaudio
except ImportError as error:  # the C++ tests skip, saying why
    torch = torchaudio = None
    TORCH_MISSING = f"{error} (install Debian's python3-torch and python3-torchaudio)"

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "support" / "python"))
import librosa  # noqa: E402  (the stand-in)


def write(out, name, array):
    array = np.asarray(array, dtype=np.float32)
    if array.ndim == 1:
        array = array[None, :]
    assert array.ndim == 2, (name, array.shape)
    with open(out / f"{name}.f32", "wb") as f:
        f.write(np.array(array.shape, dtype="<i4").tobytes())
        f.write(np.ascontiguousarray(array, dtype="<f4").tobytes())


def speech_like(rate, seconds=1.6, seed=7):
    """Voiced harmonics with a gliding pitch and syllable envelope, breath noise, a stretch of
    digital silence and a quiet tail: the dynamic range the features' floors must handle."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * rate)) / rate
    f0 = 140 + 40 * np.sin(2 * np.pi * 1.3 * t)
    phase = 2 * np.pi * np.cumsum(f0) / rate
    voiced = sum((0.5 / k) * np.sin(k * phase) for k in range(1, 30) if k * 300 < rate / 2)
    envelope = 0.5 * (1 - np.cos(2 * np.pi * 3.0 * t))
    signal = 0.3 * voiced * envelope + 0.01 * rng.standard_normal(len(t))
    silence = (t > 0.7) & (t < 0.95)
    signal[silence] = 0.0
    signal[t > 1.4] *= 0.01
    return signal.astype(np.float32)


def tones(rate, seconds=1.0, top_hz=6000):
    t = np.arange(int(seconds * rate)) / rate
    freqs = [110, 440, 1000, 2500, 4000, top_hz]
    return (sum(0.12 * np.sin(2 * np.pi * f * t + i) for i, f in enumerate(freqs))).astype(np.float32)


def espeak_recording(tmp):
    if shutil.which("espeak-ng") is None:
        return None
    path = pathlib.Path(tmp) / "espeak.wav"
    subprocess.run(["espeak-ng", "-v", "en", "-w", str(path),
                    "The quick brown fox jumps over the lazy dog, twice."], check=True)
    samples, rate = soundfile.read(str(path), dtype="float32")
    return samples if samples.ndim == 1 else samples.mean(axis=1), rate


def resample(samples, source_rate, target_rate):
    if source_rate == target_rate:
        return np.asarray(samples, dtype=np.float32)
    x = torch.from_numpy(np.asarray(samples, dtype=np.float32))[None, :]
    return torchaudio.transforms.Resample(orig_freq=source_rate, new_freq=target_rate)(x)[0].numpy()


def slaney_filters(rate, n_fft, n_mels, fmax):
    """torchaudio's Slaney filters, [n_mels, bins]; the librosa stand-in must agree with them."""
    filters = torchaudio.functional.melscale_fbanks(
        n_freqs=n_fft // 2 + 1, f_min=0.0, f_max=float(fmax), n_mels=n_mels, sample_rate=rate,
        norm="slaney", mel_scale="slaney").T.numpy()
    standin = librosa.filters.mel(sr=rate, n_fft=n_fft, n_mels=n_mels, fmin=0.0, fmax=fmax)
    assert np.abs(filters - standin).max() < 1e-6 * max(1.0, np.abs(filters).max()) * 10, \
        "the librosa stand-in disagrees with torchaudio's Slaney filters"
    return filters


def power_stft_whisper(x16):
    x = torch.from_numpy(x16)
    stft = torch.stft(x, 400, 160, window=torch.hann_window(400), center=True, pad_mode="reflect",
                      return_complex=True)
    return (stft.abs() ** 2).T.numpy()  # [frames, 201]


def whisper_log_mel(x16, n_mels=128):
    """whisper/audio.py log_mel_spectrogram (openai-whisper 20231117), step by step."""
    x = torch.from_numpy(x16)
    stft = torch.stft(x, 400, 160, window=torch.hann_window(400), return_complex=True)
    magnitudes = stft[..., :-1].abs() ** 2
    filters = torch.from_numpy(librosa.filters.mel(sr=16000, n_fft=400, n_mels=n_mels))
    mel = filters @ magnitudes
    log_spec = torch.clamp(mel, min=1e-10).log10()
    log_spec = torch.maximum(log_spec, log_spec.max() - 8.0)
    return ((log_spec + 4.0) / 4.0).numpy()


def load_matcha():
    candidates = []
    if os.environ.get("VOXSERVE_MATCHA_REF"):
        candidates.append(pathlib.Path(os.environ["VOXSERVE_MATCHA_REF"]))
    if os.environ.get("VOXSERVE_COSYVOICE_REF"):
        ref = pathlib.Path(os.environ["VOXSERVE_COSYVOICE_REF"])
        candidates += [ref.parent / "Matcha-TTS", ref / "third_party" / "Matcha-TTS"]
    for root in candidates:
        path = root / "matcha" / "utils" / "audio.py"
        if path.is_file():
            spec = importlib.util.spec_from_file_location("matcha_utils_audio", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module.mel_spectrogram, f"matcha.utils.audio.mel_spectrogram from {path}"
    return None, ("replayed in torch: no matcha/utils/audio.py under VOXSERVE_MATCHA_REF or "
                  "VOXSERVE_COSYVOICE_REF (../Matcha-TTS, third_party/Matcha-TTS)")


def matcha_replay(y, n_fft, num_mels, sampling_rate, hop_size, win_size, fmin, fmax, center=False):
    """The steps of matcha.utils.audio.mel_spectrogram (model-interfaces.md 3.5)."""
    basis = torch.from_numpy(librosa.filters.mel(sr=sampling_rate, n_fft=n_fft, n_mels=num_mels,
                                                 fmin=fmin, fmax=fmax)).float()
    pad = int((n_fft - hop_size) / 2)
    y = torch.nn.functional.pad(y.unsqueeze(1), (pad, pad), mode="reflect").squeeze(1)
    spec = torch.view_as_real(torch.stft(y, n_fft, hop_length=hop_size, win_length=win_size,
                                         window=torch.hann_window(win_size), center=center,
                                         pad_mode="reflect", normalized=False, onesided=True,
                                         return_complex=True))
    spec = torch.sqrt(spec.pow(2).sum(-1) + 1e-9)
    return torch.log(torch.clamp(torch.matmul(basis, spec), min=1e-5))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    out = pathlib.Path(parser.parse_args().out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "unavailable.txt").unlink(missing_ok=True)
    if torch is None:
        (out / "unavailable.txt").write_text(TORCH_MISSING + "\n")
        return
    torch.set_num_threads(1)

    write(out, "melfb_slaney_16000_400_128", slaney_filters(16000, 400, 128, 8000))
    write(out, "melfb_slaney_24000_1920_80", slaney_filters(24000, 1920, 80, 8000))
    kaldi_banks, _ = torchaudio.compliance.kaldi.get_mel_banks(80, 512, 16000.0, 20.0, 0.0,
                                                               100.0, -500.0, 1.0)
    write(out, "melfb_kaldi_80_512", torch.nn.functional.pad(kaldi_banks, (0, 1)).numpy())

    signals = {"speechlike": (speech_like(48000), 48000)}
    with tempfile.TemporaryDirectory() as tmp:
        recording = espeak_recording(tmp)
    if recording is not None:
        signals["espeak"] = recording
        write(out, "signal_espeak_source", recording[0])
        for target in (16000, 24000):
            write(out, f"resampled_espeak_{target}", resample(recording[0], recording[1], target))
    tones_48k = tones(48000)
    write(out, "tones_48000", tones_48k)
    for target in (16000, 24000):
        write(out, f"resampled_tones_{target}", resample(tones_48k, 48000, target))

    matcha, matcha_source = load_matcha()
    (out / "matcha_source.txt").write_text(matcha_source + "\n")
    for name, (samples, rate) in signals.items():
        x16 = resample(samples, rate, 16000)
        x24 = resample(samples, rate, 24000)
        write(out, f"signal_{name}_16k", x16)
        write(out, f"signal_{name}_24k", x24)
        write(out, f"stft_{name}", power_stft_whisper(x16))
        write(out, f"whisper_{name}", whisper_log_mel(x16))
        fbank = torchaudio.compliance.kaldi.fbank(torch.from_numpy(x16)[None, :], num_mel_bins=80,
                                                  dither=0, sample_frequency=16000)
        write(out, f"fbank_{name}", fbank.numpy())
        write(out, f"fbank_cmn_{name}", (fbank - fbank.mean(dim=0, keepdim=True)).numpy())
        y = torch.from_numpy(x24)[None, :]
        args = dict(n_fft=1920, num_mels=80, sampling_rate=24000, hop_size=480, win_size=1920,
                    fmin=0, fmax=8000, center=False)
        mel = (matcha or matcha_replay)(y, **args)[0]
        if matcha is not None:  # the replay must agree with the real thing where both exist
            assert torch.allclose(mel, matcha_replay(y, **args)[0], atol=1e-5)
        write(out, f"matcha_{name}", mel.T.numpy())  # [frames, 80], as frontend.py transposes
        # cosyvoice3.yaml's feat_extractor: fmax null (librosa's default, the Nyquist rate).
        args["fmax"] = None
        write(out, f"matcha_nyquist_{name}", (matcha or matcha_replay)(y, **args)[0].T.numpy())
    (out / "names.txt").write_text("\n".join(signals) + "\n")


if __name__ == "__main__":
    main()
