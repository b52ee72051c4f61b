"""torch.nn.functional.scaled_dot_product_attention for Debian's torch 1.13 (it arrived in 2.0),
which CosyVoice3's DiT calls (cosyvoice/flow/DiT/modules.py:374) and checks for at construction
(modules.py:277). The math path of torch 2's definition: softmax(q k^T / sqrt(E) + mask) v, a
boolean mask keeping where True. Installed only where torch lacks it."""
import math

import torch


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                  is_causal=False, scale=None):
    if dropout_p != 0.0 or is_causal:
        raise NotImplementedError("stand-in: only the inference call the DiT makes")
    scale = 1.0 / math.sqrt(query.size(-1)) if scale is None else scale
    scores = torch.matmul(query, key.transpose(-2, -1)) * scale
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask
    return torch.matmul(torch.softmax(scores, dim=-1), value)


def install():
    import torch.nn.functional as F
    if not hasattr(F, "scaled_dot_product_attention"):
        F.scaled_dot_product_attention = scaled_dot_product_attention
