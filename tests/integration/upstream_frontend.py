"""Upstream CosyVoice's own frontend (cosyvoice/cli/frontend.py, CosyVoiceFrontEnd) imported as
is from $VOXSERVE_COSYVOICE_REF, for the oracle test. What is upstream code and what is ours:

  upstream, unmodified: CosyVoiceFrontEnd (_extract_spk_embedding, _extract_speech_token,
    _extract_speech_feat, text_normalize, frontend_zero_shot), cosyvoice.utils.file_utils.load_wav,
    cosyvoice.utils.frontend_utils, CosyVoice2Tokenizer / get_qwen_tokenizer; torchaudio's
    kaldi.fbank and Resample; inflect (Debian's).
  stood in (tests/support/python/cosyvoice_standins, written by us, each file says what it
    replaces): onnxruntime.InferenceSession (evaluates the bundle's .onnx files themselves),
    whisper.log_mel_spectrogram, transformers.AutoTokenizer (over tests/support/qwen2_bpe.py),
    tiktoken and whisper.tokenizer (imported by tokenizer.py for CosyVoice 1, never used),
    matcha.utils.audio.mel_spectrogram when Matcha-TTS beside the checkout lacks matcha/utils,
    librosa.filters.mel (tests/support/python/librosa).
  a shim: torchaudio.load(..., backend="soundfile") (file_utils.py:45) is torchaudio >= 2.1's
    signature; Debian's 0.13 takes no `backend`, so 0.13's soundfile backend is selected once
    (torchaudio.set_audio_backend) and the keyword is dropped (any other backend is refused).
  not run: ttsfrd and wetext (absent here; upstream falls back to no text normalizer,
    frontend.py:65-75, as voxserve does).
"""
import functools
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SUPPORT = os.path.join(HERE, "..", "support", "python")
STANDINS = os.path.join(SUPPORT, "cosyvoice_standins")

# cosyvoice2.yaml:150-158, the feat_extractor's arguments.
FEAT_EXTRACTOR_ARGS = dict(n_fft=1920, num_mels=80, sampling_rate=24000, hop_size=480,
                           win_size=1920, fmin=0, fmax=8000, center=False)


def oracle_path():
    """The upstream checkout, or None when VOXSERVE_COSYVOICE_REF is unset. Relative paths are
    taken from the current directory or the repository root (as .ci/run may give it)."""
    path = os.environ.get("VOXSERVE_COSYVOICE_REF")
    if not path:
        return None
    root = os.path.abspath(os.path.join(HERE, "..", ".."))
    for candidate in ([path] if os.path.isabs(path) else [path, os.path.join(root, path)]):
        if os.path.isfile(os.path.join(candidate, "cosyvoice", "cli", "frontend.py")):
            return os.path.abspath(candidate)
    raise RuntimeError(f"VOXSERVE_COSYVOICE_REF={path}: no cosyvoice/cli/frontend.py there")


def _shim_torchaudio_load():
    import torchaudio
    if getattr(torchaudio.load, "_voxserve_shim", False):
        return
    # set_audio_backend rebinds torchaudio.load, so select the backend once, then wrap.
    torchaudio.set_audio_backend("soundfile")
    original = torchaudio.load

    def load(filepath, *args, backend=None, **kwargs):
        if backend not in (None, "soundfile"):
            raise ValueError(f"torchaudio.load shim: only backend='soundfile', not {backend!r}")
        return original(filepath, *args, **kwargs)

    load._voxserve_shim = True
    torchaudio.load = load


def _feat_extractor(ref):
    """Matcha's mel_spectrogram from Matcha-TTS beside the checkout when it is there, else the
    stand-in. Returns (callable, where it came from)."""
    matcha = os.environ.get("VOXSERVE_MATCHA_REF") or os.path.join(ref, "..", "Matcha-TTS")
    if os.path.isfile(os.path.join(matcha, "matcha", "utils", "audio.py")):
        sys.path.insert(0, os.path.abspath(matcha))
        from matcha.utils.audio import mel_spectrogram
        source = "matcha.utils.audio (upstream Matcha-TTS)"
    else:
        from matcha_audio import mel_spectrogram
        source = "matcha_audio stand-in (Matcha-TTS copy has no matcha/utils)"
    return functools.partial(mel_spectrogram, **FEAT_EXTRACTOR_ARGS), source


def make_frontend(ref, bundle):
    """Upstream's CosyVoiceFrontEnd on the bundle's graphs and tokenizer files, built as
    CosyVoice2.__init__ builds it (cosyvoice/cli/cosyvoice.py:152-157), no spk2info.
    Returns (frontend, notes on what was stood in)."""
    for path in (ref, SUPPORT, STANDINS):  # stand-ins first: they shadow absent packages only
        if path not in sys.path:
            sys.path.insert(0, os.path.abspath(path))
    _shim_torchaudio_load()
    from cosyvoice.cli.frontend import CosyVoiceFrontEnd
    from cosyvoice.tokenizer.tokenizer import get_qwen_tokenizer
    import onnxruntime
    assert os.path.dirname(os.path.abspath(onnxruntime.__file__)) == os.path.abspath(STANDINS)
    feat_extractor, feat_source = _feat_extractor(ref)
    get_tokenizer = functools.partial(get_qwen_tokenizer,
                                      token_path=os.path.join(bundle, "tokenizer"),
                                      skip_special_tokens=True)
    frontend = CosyVoiceFrontEnd(get_tokenizer, feat_extractor,
                                 os.path.join(bundle, "campplus.onnx"),
                                 os.path.join(bundle, "speech_tokenizer_v2.onnx"), "", "all")
    return frontend, {"feat_extractor": feat_source, "text_frontend": frontend.text_frontend}
