"""Builds upstream's CosyVoice2 and CosyVoice3 modules (llm, flow, hift) from the numbers of its
yaml config, with random weights (seeded) or a real checkpoint; tiny sizes shrink the widths and
depths but keep every fixed interface number (80 mel bins, 192-d x-vector, 6561 speech tokens,
Qwen2's vocabulary, 480 samples per mel frame)."""
import copy
import functools
import importlib
import json
import os
import sys
import tempfile

import standins
import upstream_config

# Widths/depths for the tiny test bundles. Only sizes: the graph signatures stay those of the real
# model except for the hidden widths they name (LLM hidden/heads, flow channels).
TINY = {
    # head_dim 16: GroupQueryAttention's rotary needs a multiple of 16 (llm_step_graph.py).
    "qwen2": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2),
    # 512 stays: upsample_encoder.py:203,218 hard-code it for the lookahead and upsample layers.
    "flow.encoder": dict(attention_heads=2, linear_units=64, num_blocks=1),
    "flow.decoder.estimator": dict(channels=[32], attention_head_dim=16, n_blocks=1,
                                   num_mid_blocks=1, num_heads=2),
    "hift": dict(base_channels=32),
    "hift.f0_predictor": dict(cond_channels=32),
}
# CosyVoice3's flow and HiFT (cosyvoice3.yaml) at tiny widths. The DiT keeps upstream's shape of
# rotary: dim_head of the 4 x 16 projection, so the rotation still covers the first head only.
TINY_COSYVOICE3 = {
    "flow.pre_lookahead_layer": dict(channels=64),
    "flow.decoder.estimator": dict(dim=64, depth=2, heads=4, dim_head=16),
    "hift": dict(base_channels=32),
    "hift.f0_predictor": dict(cond_channels=32),
}


def family(config):
    """cosyvoice2 or cosyvoice3, from the LLM class the yaml names."""
    return "cosyvoice3" if config["llm"].target.endswith("CosyVoice3LM") else "cosyvoice2"


REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


# Tiny bundles: the flow encoder's relative positional tables hold this many positions instead of
# upstream's 5000 (cosyvoice/transformer/embedding.py max_len): its attention projects the whole
# table every call, which made the tiny graph 74 MB and its goldens slow. Enough for 300 tokens.
TINY_MAX_POSITIONS = 600


def _shorten_positional_tables(module, positions):
    import torch
    for m in module.modules():
        if hasattr(m, "extend_pe") and getattr(m, "pe", None) is not None:
            m.pe = None
            m.extend_pe(torch.tensor(0.0).expand(1, positions))


def oracle_path():
    """Upstream's checkout from $VOXSERVE_COSYVOICE_REF (relative paths may be relative to the
    current directory or to the repository root, as the CI script gives it), or None."""
    path = os.environ.get("VOXSERVE_COSYVOICE_REF")
    if not path:
        return None
    candidates = [path] if os.path.isabs(path) else [path, os.path.join(REPO_ROOT, path)]
    for candidate in candidates:
        if os.path.isdir(os.path.join(candidate, "cosyvoice")):
            return os.path.abspath(candidate)
    sys.exit(f"VOXSERVE_COSYVOICE_REF={path}: no cosyvoice/ package there (looked in " +
             ", ".join(os.path.abspath(c) for c in candidates) + ")")


def import_upstream(ref=None):
    ref = ref or oracle_path()
    if ref is None:
        sys.exit("set VOXSERVE_COSYVOICE_REF to an upstream CosyVoice checkout")
    if not os.path.isdir(os.path.join(ref, "cosyvoice")):
        sys.exit(f"no upstream CosyVoice checkout at {ref} (set VOXSERVE_COSYVOICE_REF)")
    matcha = os.environ.get("VOXSERVE_MATCHA_REF") or os.path.join(ref, "..", "Matcha-TTS")
    for p in (ref, os.path.abspath(matcha)):
        if p not in sys.path:
            sys.path.insert(0, p)
    standins.install()
    return ref


def _target(dotted):
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _build(node):
    if isinstance(node, upstream_config.Tagged):
        kwargs = {k: _build(v) for k, v in node.items() if k != "__args__"}
        if node.kind == "name":
            return functools.partial(_target(node.target), **kwargs)
        if node.target == "omegaconf.DictConfig":
            from omegaconf import DictConfig
            return DictConfig(kwargs["content"])
        return _target(node.target)(**kwargs)
    if isinstance(node, list):
        return [_build(v) for v in node]
    if isinstance(node, dict):
        return {k: _build(v) for k, v in node.items()}
    return node


def _shrink(config, parts):
    table = TINY_COSYVOICE3 if family(config) == "cosyvoice3" else TINY
    for where, values in table.items():
        if where == "qwen2" or where.split(".")[0] not in parts:
            continue
        node = config
        for part in where.split("."):
            node = node[part]
        node.update(values)


def build(yaml_path, size="real", seed=0, qwen2_config=None, parts=("llm", "flow", "hift")):
    """Returns (config, llm, flow, hift) as upstream's classes, in eval mode, float32; a module
    not in `parts` is None."""
    import torch
    config = copy.deepcopy(upstream_config.load(yaml_path))
    if size == "tiny":
        _shrink(config, parts)
    qwen = dict(qwen2_config or {})
    if size == "tiny":
        qwen.update(TINY["qwen2"])
    # Qwen2Encoder reads <pretrain_path>/config.json (cosyvoice/llm/llm.py:229).
    qwen_dir = tempfile.mkdtemp(prefix="qwen2-config-")
    with open(os.path.join(qwen_dir, "config.json"), "w") as f:
        json.dump(qwen, f)
    config["llm"]["llm"]["pretrain_path"] = qwen_dir
    hidden = qwen.get("hidden_size", 896)
    config["llm"]["llm_input_size"] = config["llm"]["llm_output_size"] = hidden
    torch.manual_seed(seed)
    llm, flow, hift = (_build(config[k]).eval() if k in parts else None
                       for k in ("llm", "flow", "hift"))
    if size == "tiny" and flow is not None and hasattr(flow, "encoder"):
        _shorten_positional_tables(flow.encoder, TINY_MAX_POSITIONS)
    return config, llm, flow, hift
