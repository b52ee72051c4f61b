"""A stand-in for the one piece of librosa the oracles import (Debian 12 has no librosa).

matcha.utils.audio does `from librosa.filters import mel as librosa_mel_fn`; this package provides
just that function, written by us from librosa's documented definition (Slaney mel scale, Slaney
area normalization). tests/unit/audio/make_feature_oracles.py checks it against torchaudio's
melscale_fbanks(norm="slaney", mel_scale="slaney") before using it.
"""
from . import filters  # noqa: F401
