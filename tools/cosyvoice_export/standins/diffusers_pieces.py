"""The few diffusers pieces Matcha-TTS's transformer block imports (matcha/models/components/
transformer.py:5-14, decoder.py:8), written against diffusers' documented behaviour: Attention
with an additive [B, T, T] mask bias, the GELU/GEGLU/ApproximateGELU projections, get_activation.
Module and parameter names match diffusers (to_q, to_k, to_v, to_out.0, proj) so upstream's
flow.pt loads into them unchanged."""
import math

import torch
from torch import nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, query_dim, cross_attention_dim=None, heads=8, dim_head=64, dropout=0.0,
                 bias=False, upcast_attention=False, out_bias=True, **_ignored):
        super().__init__()
        inner = heads * dim_head
        kv_dim = cross_attention_dim if cross_attention_dim is not None else query_dim
        self.heads = heads
        self.scale = dim_head ** -0.5
        self.to_q = nn.Linear(query_dim, inner, bias=bias)
        self.to_k = nn.Linear(kv_dim, inner, bias=bias)
        self.to_v = nn.Linear(kv_dim, inner, bias=bias)
        self.to_out = nn.ModuleList([nn.Linear(inner, query_dim, bias=out_bias), nn.Dropout(dropout)])

    def forward(self, hidden_states, encoder_hidden_states=None, attention_mask=None, **_ignored):
        context = hidden_states if encoder_hidden_states is None else encoder_hidden_states
        b, t, _ = hidden_states.shape
        h = self.heads

        def split(x):
            return x.view(b, -1, h, x.shape[-1] // h).transpose(1, 2)

        q, k, v = split(self.to_q(hidden_states)), split(self.to_k(context)), split(self.to_v(context))
        scores = torch.matmul(q, k.transpose(-1, -2)) * self.scale
        if attention_mask is not None:  # additive bias [B, T, S] (cosyvoice/utils/common.py mask_to_bias)
            scores = scores + attention_mask.unsqueeze(1)
        out = torch.matmul(scores.softmax(dim=-1), v).transpose(1, 2).reshape(b, t, -1)
        return self.to_out[1](self.to_out[0](out))


class GELU(nn.Module):
    def __init__(self, dim_in, dim_out, approximate="none", bias=True):
        super().__init__()
        self.proj = nn.Linear(dim_in, dim_out, bias=bias)
        self.approximate = approximate

    def forward(self, x):
        return F.gelu(self.proj(x), approximate=self.approximate)


class GEGLU(nn.Module):
    def __init__(self, dim_in, dim_out, bias=True):
        super().__init__()
        self.proj = nn.Linear(dim_in, dim_out * 2, bias=bias)

    def forward(self, x):
        hidden, gate = self.proj(x).chunk(2, dim=-1)
        return hidden * F.gelu(gate)


class ApproximateGELU(nn.Module):
    def __init__(self, dim_in, dim_out, bias=True):
        super().__init__()
        self.proj = nn.Linear(dim_in, dim_out, bias=bias)

    def forward(self, x):
        x = self.proj(x)
        return x * torch.sigmoid(1.702 * x)


class _Unused(nn.Module):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("stand-in: CosyVoice2's estimator uses norm_type layer_norm only")


AdaLayerNorm = AdaLayerNormZero = _Unused


class LoRACompatibleLinear(nn.Linear):
    def forward(self, x, scale=None):
        return super().forward(x)


def maybe_allow_in_graph(cls):
    return cls


_ACTIVATIONS = {"swish": nn.SiLU, "silu": nn.SiLU, "mish": nn.Mish, "gelu": nn.GELU, "relu": nn.ReLU}


def get_activation(name):
    return _ACTIVATIONS[name.lower()]()
