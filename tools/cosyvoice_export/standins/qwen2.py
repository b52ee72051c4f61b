"""A Qwen2 decoder in plain torch, standing in for transformers.Qwen2ForCausalLM.

Debian ships no `transformers`, so upstream's Qwen2Encoder (cosyvoice/llm/llm.py:226) gets this
class instead. Parameter names follow Hugging Face's Qwen2 (model.layers.N.self_attn.q_proj, ...)
so a real llm.pt state dict loads into it unchanged. Only what CosyVoice uses is here: inputs_embeds
in, the final normed hidden state out, a KV cache as a list of (key, value) [B, kv_heads, T, head_dim].
"""
import json
import math
import os
from dataclasses import dataclass, field
from types import SimpleNamespace

import torch
from torch import nn
import torch.nn.functional as F


@dataclass
class Qwen2Config:
    # Qwen2.5-0.5B (CosyVoice-BlankEN/config.json).
    vocab_size: int = 151936
    hidden_size: int = 896
    intermediate_size: int = 4864
    num_hidden_layers: int = 24
    num_attention_heads: int = 14
    num_key_value_heads: int = 2
    rms_norm_eps: float = 1e-6
    rope_theta: float = 1000000.0
    tie_word_embeddings: bool = True
    max_position_embeddings: int = 32768

    @property
    def head_dim(self):
        return self.hidden_size // self.num_attention_heads

    @staticmethod
    def from_json(path):
        with open(path) as f:
            raw = json.load(f)
        known = {k: raw[k] for k in Qwen2Config.__dataclass_fields__ if k in raw}
        return Qwen2Config(**known)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def rope(x, positions, theta):
    """x [B, H, S, D], positions [B, S] (int64): HF's rotate-half RoPE."""
    dim = x.shape[-1]
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    freqs = positions.to(torch.float32).unsqueeze(-1) * inv_freq  # [B, S, D/2]
    emb = torch.cat([freqs, freqs], dim=-1).unsqueeze(1)  # [B, 1, S, D]
    return x * emb.cos() + rotate_half(x) * emb.sin()


class Qwen2Attention(nn.Module):
    def __init__(self, c: Qwen2Config):
        super().__init__()
        self.c = c
        d = c.head_dim
        self.q_proj = nn.Linear(c.hidden_size, c.num_attention_heads * d, bias=True)
        self.k_proj = nn.Linear(c.hidden_size, c.num_key_value_heads * d, bias=True)
        self.v_proj = nn.Linear(c.hidden_size, c.num_key_value_heads * d, bias=True)
        self.o_proj = nn.Linear(c.num_attention_heads * d, c.hidden_size, bias=False)

    def new_kv(self, x, positions):
        """The key/value of x alone (what a decode step appends to the cache)."""
        b, s, _ = x.shape
        c = self.c
        k = self.k_proj(x).view(b, s, c.num_key_value_heads, c.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, c.num_key_value_heads, c.head_dim).transpose(1, 2)
        return rope(k, positions, c.rope_theta), v

    def forward(self, x, positions, past, new, bias):
        """past: the cache's (keys, values) [B, kvh, P, D] or None; new: x's own (key, value)
        [B, kvh, S, D] (from new_kv); bias [B, 1, S, P + S] additive, past slots first.

        The same attention as HF's (concatenate past and new, repeat each kv head for its query
        heads, softmax), computed without building either copy: the exported graph runs this every
        step, and torch.cat of the whole cache plus repeat_kv's `groups`-fold expansion of it moved
        far more memory per step than the weights and the cache themselves (the scores are
        concatenated instead, [B, H, S, P + S], a sliver of the cache at decode)."""
        b, s, _ = x.shape
        c = self.c
        groups = c.num_attention_heads // c.num_key_value_heads
        q = self.q_proj(x).view(b, s, c.num_attention_heads, c.head_dim).transpose(1, 2)
        q = rope(q, positions, c.rope_theta)
        # GQA: kv head i serves query heads i * groups ... i * groups + groups - 1 (HF's
        # repeat_kv order), so those heads' rows form one matmul against it.
        q = q.reshape(b, c.num_key_value_heads, groups * s, c.head_dim)

        def scores(keys):  # [B, kvh, T, D] -> [B, H, S, T]
            t = torch.matmul(q, keys.transpose(2, 3)) / math.sqrt(c.head_dim)
            return t.reshape(b, c.num_attention_heads, s, -1)

        def weighted(probs, values):  # [B, H, S, T] x [B, kvh, T, D] -> [B, kvh, groups * S, D]
            return torch.matmul(probs.reshape(b, c.num_key_value_heads, groups * s, -1), values)

        k_new, v_new = new
        if past is None:
            out = weighted(torch.softmax(scores(k_new) + bias, dim=-1), v_new)
        else:
            p = past[0].shape[2]
            probs = torch.softmax(torch.cat([scores(past[0]), scores(k_new)], dim=-1) + bias, dim=-1)
            out = weighted(probs[..., :p], past[1]) + weighted(probs[..., p:], v_new)
        out = out.reshape(b, c.num_attention_heads, s, c.head_dim)
        return self.o_proj(out.transpose(1, 2).reshape(b, s, -1))


class Qwen2MLP(nn.Module):
    def __init__(self, c: Qwen2Config):
        super().__init__()
        self.gate_proj = nn.Linear(c.hidden_size, c.intermediate_size, bias=False)
        self.up_proj = nn.Linear(c.hidden_size, c.intermediate_size, bias=False)
        self.down_proj = nn.Linear(c.intermediate_size, c.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Qwen2DecoderLayer(nn.Module):
    def __init__(self, c: Qwen2Config):
        super().__init__()
        self.self_attn = Qwen2Attention(c)
        self.mlp = Qwen2MLP(c)
        self.input_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)


class Qwen2Model(nn.Module):
    def __init__(self, c: Qwen2Config):
        super().__init__()
        self.embed_tokens = nn.Embedding(c.vocab_size, c.hidden_size)
        self.layers = nn.ModuleList([Qwen2DecoderLayer(c) for _ in range(c.num_hidden_layers)])
        self.norm = RMSNorm(c.hidden_size, c.rms_norm_eps)

    def step(self, x, positions, past, bias):
        """One pass over new inputs x [B, S, H].

        past: per layer (keys, values) [B, kvh, P, D] or None; bias [B, 1, S, P + S].
        Returns the normed hidden state and per layer the new (key, value) of x only.
        """
        new = []
        for i, layer in enumerate(self.layers):
            h = layer.input_layernorm(x)
            kv = layer.self_attn.new_kv(h, positions)
            new.append(kv)
            x = x + layer.self_attn(h, positions, None if past is None else past[i], kv, bias)
            x = x + layer.mlp(layer.post_attention_layernorm(x))
        return self.norm(x), new


class Qwen2ForCausalLM(nn.Module):
    """The subset of transformers' Qwen2ForCausalLM that cosyvoice/llm/llm.py calls."""

    def __init__(self, config: Qwen2Config):
        super().__init__()
        self.config = config
        self.model = Qwen2Model(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        if config.tie_word_embeddings:  # Qwen2.5-0.5B ties them (config.json)
            self.lm_head.weight = self.model.embed_tokens.weight

    @classmethod
    def from_pretrained(cls, path):
        """Builds from path/config.json; weights come later (llm.pt overwrites them upstream)."""
        return cls(Qwen2Config.from_json(os.path.join(path, "config.json")))

    def forward(self, inputs_embeds, attention_mask=None, output_hidden_states=True,
                return_dict=True, use_cache=False, past_key_values=None):
        b, s, _ = inputs_embeds.shape
        p = 0 if past_key_values is None else past_key_values[0][0].shape[2]
        if attention_mask is None:
            attention_mask = torch.ones(b, p + s, dtype=torch.bool)
        valid = attention_mask.to(torch.bool)
        if valid.shape[1] == s and p > 0:  # a mask over the new positions only
            valid = torch.cat([torch.ones(b, p, dtype=torch.bool), valid], dim=1)
        # HF: positions count the valid tokens before each one (left padding never occurs here).
        positions = (torch.cumsum(valid.to(torch.int64), dim=1) - 1).clamp(min=0)[:, p:]
        causal = torch.ones(s, p + s, dtype=torch.bool).tril(diagonal=p)
        allowed = causal.unsqueeze(0) & valid.unsqueeze(1)
        bias = torch.zeros(b, 1, s, p + s).masked_fill(~allowed.unsqueeze(1), float("-inf"))
        hidden, new = self.model.step(inputs_embeds, positions, past_key_values, bias)
        if past_key_values is not None:
            cache = [(torch.cat([pk, nk], dim=2), torch.cat([pv, nv], dim=2))
                     for (pk, pv), (nk, nv) in zip(past_key_values, new)]
        else:
            cache = new
        return SimpleNamespace(hidden_states=(hidden,), past_key_values=cache,
                               logits=self.lm_head(hidden))
