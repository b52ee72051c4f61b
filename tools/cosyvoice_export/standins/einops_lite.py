"""einops' pack/rearrange/repeat for the simple patterns CosyVoice's and Matcha's decoders use
(axis permutations, inserting or removing unit axes, concatenation over one '*' axis)."""
import torch


def _axes(side):
    return side.split()


def rearrange(x, pattern):
    left, right = (_axes(s) for s in pattern.split("->"))
    named = [a for a in left if a != "1"]
    for i in reversed([i for i, a in enumerate(left) if a == "1"]):
        x = x.squeeze(i)
    target = [a for a in right if a != "1"]
    x = x.permute(*[named.index(a) for a in target])
    for i, a in enumerate(right):
        if a == "1":
            x = x.unsqueeze(i)
    return x


def repeat(x, pattern, **sizes):
    left, right = (_axes(s) for s in pattern.split("->"))
    for i, a in enumerate(right):
        if a not in left:
            x = x.unsqueeze(i)
    shape = [sizes.get(a, -1) for a in right]
    return x.expand(*shape)


def pack(tensors, pattern):
    axes = _axes(pattern)
    star = axes.index("*")
    shapes = [t.shape[star:t.dim() - (len(axes) - star - 1)] for t in tensors]
    flat = [t.reshape(*t.shape[:star], -1, *t.shape[t.dim() - (len(axes) - star - 1):])
            for t in tensors]
    return torch.cat(flat, dim=star), shapes
