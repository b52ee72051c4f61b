"""x-transformers' rotary embedding as upstream CosyVoice pins it (requirements.txt:
x-transformers==2.11.24, x_transformers/x_transformers.py RotaryEmbedding, rotate_half and
apply_rotary_pos_emb): Debian has no x-transformers. Only what CosyVoice3's DiT calls
(cosyvoice/flow/DiT/dit.py:139,157 and modules.py:355-356); the behaviour that matters is kept
exactly: frequencies repeated pairwise (f0, f0, f1, f1, ...), rotate_half over interleaved pairs,
and only the first `dim` channels rotated (the DiT passes the whole 16-head projection, so only
the first head's channels turn)."""
import torch
from torch import nn


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, use_xpos=False, scale_base=512, interpolation_factor=1.0, base=10000,
                 base_rescale_factor=1.0):
        super().__init__()
        if use_xpos:
            raise NotImplementedError("stand-in: x-transformers' xpos scaling is not used upstream")
        base *= base_rescale_factor ** (dim / (dim - 2))
        # A persistent buffer, as in x-transformers: upstream's flow.pt carries it.
        self.register_buffer("inv_freq", 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim)))
        self.interpolation_factor = interpolation_factor

    def forward_from_seq_len(self, seq_len):
        return self.forward(torch.arange(seq_len, device=self.inv_freq.device))

    def forward(self, t):
        if t.ndim == 1:
            t = t.unsqueeze(0)
        freqs = torch.einsum("bi,j->bij", t.type_as(self.inv_freq), self.inv_freq)
        freqs = freqs / self.interpolation_factor
        freqs = torch.stack((freqs, freqs), dim=-1).flatten(-2)  # '... d r -> ... (d r)'
        return freqs, 1.0


def rotate_half(x):
    # '... (d r) -> ... d r', r = 2 (reshape: torch 1.13 exports no unflatten)
    pairs = x.reshape(*x.shape[:-1], -1, 2)
    x1, x2 = pairs.unbind(dim=-1)
    return torch.stack((-x2, x1), dim=-1).reshape(x.shape)


def apply_rotary_pos_emb(t, freqs, scale=1):
    rot_dim, seq_len, orig_dtype = freqs.shape[-1], t.shape[-2], t.dtype
    freqs = freqs[:, -seq_len:, :]
    if torch.is_tensor(scale):
        scale = scale[:, -seq_len:, :]
    if t.ndim == 4 and freqs.ndim == 3:
        freqs = freqs.unsqueeze(1)
        if torch.is_tensor(scale):
            scale = scale.unsqueeze(1)
    t, t_unrotated = t[..., :rot_dim], t[..., rot_dim:]
    t = (t * freqs.cos() * scale) + (rotate_half(t) * freqs.sin() * scale)
    return torch.cat((t, t_unrotated), dim=-1).type(orig_dtype)


def self_check():
    """The goldens are only as good as the stand-in the DiT runs on here: hold it to the rotation
    x-transformers 2.11.24 defines, written independently as complex products: channel pairs
    (2k, 2k+1) of the first `dim` channels turn by position x base^(-2k/dim), the rest pass."""
    dim, seq, width = 16, 7, 64
    freqs, scale = RotaryEmbedding(dim).forward_from_seq_len(seq)
    t = torch.randn(2, seq, width)
    got = apply_rotary_pos_emb(t, freqs, scale)
    angle = torch.arange(seq)[:, None] * 10000.0 ** (-torch.arange(0, dim, 2) / dim)
    pairs = torch.view_as_complex(t[..., :dim].reshape(2, seq, dim // 2, 2).contiguous())
    turned = torch.view_as_real(pairs * torch.polar(torch.ones_like(angle), angle)).reshape(2, seq, dim)
    want = torch.cat([turned, t[..., dim:]], dim=-1)
    error = (got - want).abs().max().item()
    if error > 1e-5:
        raise AssertionError(f"the x-transformers rotary stand-in is off by {error}")
