"""Stand-ins for the Python packages Debian 12 lacks (reference/model-interfaces.md 3.5), installed
into sys.modules so that upstream CosyVoice and Matcha-TTS import unchanged. Each is small and
implements only what those imports use; anything else raises with a message saying so."""
import logging
import sys
import types

from . import diffusers_pieces, einops_lite, qwen2, sdpa, x_transformers_rotary


def _module(name, **attrs):
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    sys.modules[name] = mod
    return mod


class _Missing:
    """A package that upstream imports at module level but the random-weight path never calls."""

    def __init__(self, what):
        self._what = what

    def __getattr__(self, name):
        raise RuntimeError(f"{self._what}.{name}: not available on this machine (stand-in only)")


class _DictConfig(dict):
    """omegaconf.DictConfig as upstream's flow uses it (its cfm_params, read by attribute), for a
    machine without omegaconf: Debian has it, the GPU device's image does not."""

    def __init__(self, content=None, **kwargs):
        super().__init__(content or {}, **kwargs)

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError as e:
            raise AttributeError(name) from e


def install():
    if "voxserve_standins" in sys.modules:
        return
    _module("voxserve_standins")
    _module("transformers", Qwen2ForCausalLM=qwen2.Qwen2ForCausalLM)
    _module("einops", pack=einops_lite.pack, rearrange=einops_lite.rearrange,
            repeat=einops_lite.repeat)
    d = diffusers_pieces
    _module("diffusers")
    _module("diffusers.models")
    _module("diffusers.models.attention", GEGLU=d.GEGLU, GELU=d.GELU, AdaLayerNorm=d.AdaLayerNorm,
            AdaLayerNormZero=d.AdaLayerNormZero, ApproximateGELU=d.ApproximateGELU)
    _module("diffusers.models.attention_processor", Attention=d.Attention)
    _module("diffusers.models.lora", LoRACompatibleLinear=d.LoRACompatibleLinear)
    _module("diffusers.models.activations", get_activation=d.get_activation)
    _module("diffusers.utils")
    _module("diffusers.utils.torch_utils", maybe_allow_in_graph=d.maybe_allow_in_graph)
    _module("conformer", ConformerBlock=d._Unused)
    # CosyVoice3's DiT (cosyvoice/flow/DiT): x-transformers' rotary and torch 2's attention.
    try:
        import x_transformers  # noqa: F401  (the real package, where installed)
    except ImportError:
        r = x_transformers_rotary
        _module("x_transformers")
        _module("x_transformers.x_transformers", RotaryEmbedding=r.RotaryEmbedding,
                apply_rotary_pos_emb=r.apply_rotary_pos_emb)
    sdpa.install()
    # Matcha's checkout in the oracles folder holds models/components only.
    _module("matcha.utils")
    _module("matcha.utils.pylogger", get_pylogger=lambda name=__name__: logging.getLogger(name))
    try:
        import omegaconf  # noqa: F401
    except ImportError:
        _module("omegaconf", DictConfig=_DictConfig)
    ort = _Missing("onnxruntime")
    sys.modules["onnxruntime"] = ort  # type: ignore[assignment]
