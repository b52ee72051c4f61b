#!/usr/bin/python3
"""Oracle tensors for unit_engine_cosyvoice_hift that the bundle's goldens do not cover.

Runs upstream's own code from $VOXSERVE_COSYVOICE_REF (cosyvoice/hifigan/generator.py: SineGen2
on a voiced f0 contour -- the tiny bundle's random f0 predictor never crosses the 10 Hz voicing
threshold --, HiFTGenerator._stft and ._istft; HiFTGenerator.inference whole and inside
CosyVoice2Model.token2wav's streaming loop, on the tiny bundle's HiFT weights) and torch's
F.interpolate as token2wav calls it for speed (cosyvoice/cli/model.py:319-321). Writes .npy files
under --out. Without the variable it says so, removes --out and writes nothing (the tests skip).
"""
import argparse
import os
import shutil
import sys
import types

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    ref = os.environ.get("VOXSERVE_COSYVOICE_REF")
    if not ref:
        print("VOXSERVE_COSYVOICE_REF is unset: no HiFT oracles (the tests that need them skip)")
        shutil.rmtree(args.out, ignore_errors=True)  # no stale oracles from an earlier run
        return 0
    # A relative path may be relative to the current directory or to the repository root (as the
    # CI script gives it; tools/cosyvoice_export/upstream_modules.py resolves it the same way).
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..")
    found = [c for c in ([ref] if os.path.isabs(ref) else [ref, os.path.join(root, ref)])
             if os.path.isdir(os.path.join(c, "cosyvoice"))]
    if not found:
        sys.exit(f"VOXSERVE_COSYVOICE_REF={ref}: no cosyvoice/ package there")
    sys.path.insert(0, os.path.abspath(found[0]))
    import torch
    import torch.nn.functional as F
    from scipy.signal import get_window
    from cosyvoice.hifigan.generator import HiFTGenerator, SineGen2

    out = args.out
    os.makedirs(out, exist_ok=True)

    def save(name, tensor):
        array = tensor.detach().numpy() if isinstance(tensor, torch.Tensor) else np.asarray(tensor)
        np.save(os.path.join(out, name + ".npy"), np.ascontiguousarray(array, dtype=np.float32))

    torch.manual_seed(1234)
    # SineGen2 as CosyVoice2's HiFTGenerator builds it (generator.py:411-418, cosyvoice2.yaml).
    gen = SineGen2(24000, 480, harmonic_num=8, sine_amp=0.1, noise_std=0.003,
                   voiced_threshold=10).eval()
    frames = 40
    f0 = torch.cat([torch.zeros(6), torch.linspace(90, 420, 20), torch.full((4,), 5.0),
                    200 + 60 * torch.sin(torch.arange(10.0))])  # unvoiced, rising, <10 Hz, wobble
    assert f0.numel() == frames
    captured = []
    randn_like = torch.randn_like

    def capture(x, *a, **k):  # the noise SineGen2 draws (generator.py:310), for injection
        r = randn_like(x, *a, **k)
        captured.append(r)
        return r

    torch.randn_like = capture
    with torch.no_grad():
        f0_up = torch.nn.Upsample(scale_factor=480)(f0[None, None]).transpose(1, 2)
        sines, uv, _ = gen(f0_up)
    torch.randn_like = randn_like
    save("sinegen_f0", f0)
    save("sinegen_noise", captured[0][0])
    save("sinegen_sines", sines[0])
    save("sinegen_uv", uv[0, :, 0])
    linear = torch.nn.Linear(9, 1)
    save("sinegen_linear_weight", linear.weight[0])
    save("sinegen_linear_bias", linear.bias)
    save("sinegen_source", torch.tanh(linear(sines))[0, :, 0])

    # HiFTGenerator's STFT/iSTFT methods on an object holding only what they read.
    window = torch.from_numpy(get_window("hann", 16, fftbins=True).astype(np.float32))
    hift = types.SimpleNamespace(istft_params={"n_fft": 16, "hop_len": 4}, stft_window=window)
    save("stft_window", window)
    signal = 0.3 * torch.randn(1, 4800)
    real, imag = HiFTGenerator._stft(hift, signal)
    save("stft_signal", signal[0])
    save("stft_spec", torch.cat([real, imag], dim=1)[0])  # [18, 1201], as decode() feeds it
    stft_frames = 1201
    magnitude = torch.exp(2.0 * torch.randn(1, 9, stft_frames))  # some above the 1e2 clip
    phase = torch.sin(3.0 * torch.randn(1, 9, stft_frames))
    save("istft_magnitude", magnitude[0])
    save("istft_phase", phase[0])
    save("istft_audio", HiFTGenerator._istft(hift, magnitude, phase)[0])

    mel = torch.randn(1, 80, 37)
    save("speed_mel", mel[0])
    for speed in (0.5, 0.8, 1.25, 1.7):
        size = int(mel.shape[2] / speed)
        save(f"speed_{speed}", F.interpolate(mel, size=size, mode="linear")[0])
    _hift_inference(out, save, os.path.abspath(found[0]))
    print(f"HiFT oracles written to {out}")
    return 0


def _hift_inference(out, save, ref):
    """Upstream's HiFTGenerator with the tiny bundle's weights (the export tool's builder, same
    seed), run whole and through CosyVoice2Model.token2wav's streaming HiFT code (model.py:
    292-325, called on a stand-in `self` whose flow returns slices of a fixed mel), with the
    noise SineGen2 draws recorded per call so the C++ side can inject it."""
    import torch
    import numpy as np
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..")
    sys.path.insert(0, os.path.join(root, "tools", "cosyvoice_export"))
    import upstream_modules
    upstream_modules.import_upstream(ref)
    from cosyvoice.cli.model import CosyVoice2Model
    yaml_path = os.path.join(ref, "examples", "libritts", "cosyvoice2", "conf", "cosyvoice2.yaml")
    _, _, _, hift = upstream_modules.build(yaml_path, "tiny", 0)  # export.py's default seed
    save("hift_linear_weight", hift.m_source.l_linear.weight[0])  # tests check it is the bundle's

    captured = []
    randn_like = torch.randn_like

    def capture(x, *a, **k):
        r = randn_like(x, *a, **k)
        if x.shape[-1] == 9:  # SineGen2's draw; SourceModuleHnNSF's unused uv-shaped one is not
            captured.append(r[0].reshape(-1))
        return r

    torch.manual_seed(99)
    mel = 1.5 * torch.randn(1, 80, 170)
    save("stream_mel", mel[0])
    torch.randn_like = capture
    try:
        speech, source = hift.inference(speech_feat=mel)
        save("whole_noise", captured[0])
        save("whole_audio", speech[0])
        save("whole_source", source[0, 0])
        captured.clear()
        bounds = [0, 50, 110, 150, 170]  # mel frames; even, as token_offset * 2 slices them
        state = {}
        flow = types.SimpleNamespace(token_mel_ratio=2,
                                     inference=lambda **kw: (mel[:, :, :state["end"]], None))
        model = types.SimpleNamespace(flow=flow, hift=hift, hift_cache_dict={"u": None},
                                      mel_cache_len=8, source_cache_len=8 * 480,
                                      speech_window=np.hamming(2 * 8 * 480), fp16=False,
                                      device=torch.device("cpu"))
        chunks = []
        for i in range(len(bounds) - 1):
            state["end"] = bounds[i + 1]
            chunks.append(CosyVoice2Model.token2wav(
                model, token=torch.zeros(1, bounds[i + 1] // 2, dtype=torch.int32),
                prompt_token=torch.zeros(1, 0, dtype=torch.int32), prompt_feat=torch.zeros(1, 0, 80),
                embedding=torch.zeros(1, 192), token_offset=bounds[i] // 2, uuid="u", stream=True,
                finalize=i == len(bounds) - 2)[0])
        save("stream_bounds", torch.tensor(bounds, dtype=torch.float32))
        save("stream_noise", torch.cat(captured))
        for i, chunk in enumerate(chunks):
            save(f"stream_audio_{i}", chunk)
    finally:
        torch.randn_like = randn_like


if __name__ == "__main__":
    sys.exit(main())
