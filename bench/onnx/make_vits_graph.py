#!/usr/bin/python3
"""A Piper (VITS) voice of real size with random weights, for benchmarks (not for listening).

The network follows VITS's inference path as Piper exports it (text encoder → duration
predictor → length regulation → reverse flow → HiFi-GAN decoder) with Piper's sizes: hidden 192,
6 encoder layers, 4 coupling layers of 4 WaveNet layers, and the decoder of its quality:
  medium (Piper's default): 256 channels upsampled 8·8·4, "resblock 2" kernels 3/5/7 — about
          16 M parameters, 63 MB like en_US-lessac-medium.onnx;
  high:   512 channels upsampled 8·8·2·2, "resblock 1" kernels 3/7/11 — about 28 M parameters,
          113 MB like en_US-lessac-high.onnx.
So compute per second of audio is what a real voice costs. The export has Piper's signature
(input, input_lengths, scales → output [batch, 1, 1, samples]) plus the alignment output of
piper1-gpl (frames per id), which lets voxserve batch it.

Needs Debian's python3-torch (CPU) and python3-onnx:
  /usr/bin/python3 make_vits_graph.py --out DIR [--quality medium|high]
"""
import argparse
import json
import math
import os
import sys

import torch
from torch import nn
from torch.nn import functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "onnx_models"))
from make_test_models import PIPER_ID_MAP  # noqa: E402  Piper's default phoneme → id map

HIDDEN, FILTER, HEADS, ENC_LAYERS = 192, 768, 2, 6
FLOWS, WN_LAYERS = 4, 4
DECODERS = {  # Piper's piper_train defaults (medium) and its "high" quality
    "medium": dict(resblock=2, rates=[8, 8, 4], kernels=[16, 16, 8], channels=256,
                   res_kernels=[3, 5, 7], res_dilations=[[1, 2], [2, 6], [3, 12]]),
    "high": dict(resblock=1, rates=[8, 8, 2, 2], kernels=[16, 16, 4, 4], channels=512,
                 res_kernels=[3, 7, 11], res_dilations=[[1, 3, 5]] * 3),
}
RATE, HOP = 22050, 256


class LayerNorm(nn.Module):  # over channels of [B, C, T]
    def __init__(self, channels):
        super().__init__()
        self.channels = channels
        self.gamma = nn.Parameter(torch.ones(channels))
        self.beta = nn.Parameter(torch.zeros(channels))

    def forward(self, x):
        x = F.layer_norm(x.transpose(1, -1), (self.channels,), self.gamma, self.beta, 1e-5)
        return x.transpose(1, -1)


class EncoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Conv1d(HIDDEN, 3 * HIDDEN, 1)
        self.out = nn.Conv1d(HIDDEN, HIDDEN, 1)
        self.norm1, self.norm2 = LayerNorm(HIDDEN), LayerNorm(HIDDEN)
        self.ffn1 = nn.Conv1d(HIDDEN, FILTER, 3, padding=1)
        self.ffn2 = nn.Conv1d(FILTER, HIDDEN, 3, padding=1)

    def forward(self, x, mask):  # x [B, C, T], mask [B, 1, T]
        b, c, t = x.shape
        q, k, v = self.qkv(x).view(b, 3, HEADS, c // HEADS, t).unbind(1)
        scores = torch.matmul(q.transpose(2, 3), k) / math.sqrt(c // HEADS)  # [B, H, T, T]
        attn_mask = mask.unsqueeze(2) * mask.unsqueeze(-1)
        scores = scores.masked_fill(attn_mask == 0, -1e4)
        y = torch.matmul(v, torch.softmax(scores, dim=-1).transpose(2, 3)).reshape(b, c, t)
        x = self.norm1(x + self.out(y))
        y = self.ffn2(torch.relu(self.ffn1(x * mask)) * mask) * mask
        return self.norm2(x + y)


class WN(nn.Module):  # WaveNet-style gated convolutions of the VITS flows
    def __init__(self):
        super().__init__()
        self.in_layers = nn.ModuleList(nn.Conv1d(HIDDEN, 2 * HIDDEN, 5, padding=2)
                                       for _ in range(WN_LAYERS))
        self.res_skip = nn.ModuleList(
            nn.Conv1d(HIDDEN, 2 * HIDDEN if i < WN_LAYERS - 1 else HIDDEN, 1)
            for i in range(WN_LAYERS))

    def forward(self, x, mask):
        output = torch.zeros_like(x)
        for i in range(WN_LAYERS):
            a, b = self.in_layers[i](x).chunk(2, dim=1)
            acts = self.res_skip[i](torch.tanh(a) * torch.sigmoid(b))
            if i < WN_LAYERS - 1:
                x = (x + acts[:, :HIDDEN]) * mask
                output = output + acts[:, HIDDEN:]
            else:
                output = output + acts
        return output * mask


class Coupling(nn.Module):
    def __init__(self):
        super().__init__()
        self.pre = nn.Conv1d(HIDDEN // 2, HIDDEN, 1)
        self.wn = WN()
        self.post = nn.Conv1d(HIDDEN, HIDDEN // 2, 1)

    def reverse(self, x, mask):
        x0, x1 = x.chunk(2, dim=1)
        m = self.post(self.wn(self.pre(x0) * mask, mask)) * mask
        return torch.cat([x0, (x1 - m) * mask], dim=1).flip(1)


class ResBlock(nn.Module):
    """HiFi-GAN residual block: type 1 = dilated conv + plain conv per step, type 2 = one conv."""

    def __init__(self, kind, channels, kernel, dilations):
        super().__init__()
        self.convs1 = nn.ModuleList(nn.Conv1d(channels, channels, kernel, dilation=d,
                                              padding=d * (kernel - 1) // 2) for d in dilations)
        self.convs2 = nn.ModuleList(nn.Conv1d(channels, channels, kernel,
                                              padding=(kernel - 1) // 2)
                                    for _ in (dilations if kind == 1 else []))

    def forward(self, x):
        for i, c1 in enumerate(self.convs1):
            y = c1(F.leaky_relu(x, 0.1))
            if len(self.convs2):
                y = self.convs2[i](F.leaky_relu(y, 0.1))
            x = x + y
        return x


class Decoder(nn.Module):  # HiFi-GAN generator
    def __init__(self, config):
        super().__init__()
        channels = config["channels"]
        self.pre = nn.Conv1d(HIDDEN, channels, 7, padding=3)
        self.ups, self.blocks = nn.ModuleList(), nn.ModuleList()
        for rate, kernel in zip(config["rates"], config["kernels"]):
            self.ups.append(nn.ConvTranspose1d(channels, channels // 2, kernel, rate,
                                               padding=(kernel - rate) // 2))
            channels //= 2
            self.blocks.append(nn.ModuleList(
                ResBlock(config["resblock"], channels, k, d)
                for k, d in zip(config["res_kernels"], config["res_dilations"])))
        self.post = nn.Conv1d(channels, 1, 7, padding=3, bias=False)

    def forward(self, x):
        x = self.pre(x)
        for up, blocks in zip(self.ups, self.blocks):
            x = up(F.leaky_relu(x, 0.1))
            x = sum(block(x) for block in blocks) / len(blocks)
        return torch.tanh(self.post(F.leaky_relu(x)))


class Vits(nn.Module):
    def __init__(self, quality):
        super().__init__()
        self.emb = nn.Embedding(256, HIDDEN)
        self.encoder = nn.ModuleList(EncoderLayer() for _ in range(ENC_LAYERS))
        self.proj = nn.Conv1d(HIDDEN, 2 * HIDDEN, 1)
        self.dp = nn.Sequential(nn.Conv1d(HIDDEN, 256, 3, padding=1), nn.ReLU(),
                                nn.Conv1d(256, 256, 3, padding=1), nn.ReLU(), nn.Conv1d(256, 1, 1))
        self.flows = nn.ModuleList(Coupling() for _ in range(FLOWS))
        self.dec = Decoder(DECODERS[quality])

    def forward(self, input, input_lengths, scales):
        noise_scale, length_scale = scales[0], scales[1]
        t_x = input.size(1)
        x_mask = (torch.arange(t_x).unsqueeze(0) < input_lengths.unsqueeze(1)).unsqueeze(1).float()
        x = self.emb(input).transpose(1, 2) * math.sqrt(HIDDEN) * x_mask
        for layer in self.encoder:
            x = layer(x, x_mask) * x_mask
        m_p, logs_p = (self.proj(x) * x_mask).chunk(2, dim=1)
        w = torch.exp(self.dp(x * x_mask)) * x_mask * length_scale
        w_ceil = torch.ceil(w)                                        # frames per id [B, 1, Tx]
        y_lengths = torch.clamp_min(w_ceil.sum([1, 2]), 1).long()
        t_y = y_lengths.max()
        y_mask = (torch.arange(t_y).unsqueeze(0) < y_lengths.unsqueeze(1)).unsqueeze(1).float()
        # Monotonic alignment path: frame j belongs to id i when cum[i-1] <= j < cum[i].
        cum = torch.cumsum(w_ceil, dim=2)                             # [B, 1, Tx]
        frames = torch.arange(t_y).float().view(1, -1, 1)             # [1, Ty, 1]
        path = ((frames < cum) & (frames >= cum - w_ceil)).float()    # [B, Ty, Tx]
        m_p = torch.matmul(path, m_p.transpose(1, 2)).transpose(1, 2)
        logs_p = torch.matmul(path, logs_p.transpose(1, 2)).transpose(1, 2)
        z = (m_p + torch.randn_like(m_p) * torch.exp(logs_p) * noise_scale) * y_mask
        for flow in reversed(self.flows):
            z = flow.reverse(z, y_mask)
        audio = self.dec(z * y_mask)                                  # [B, 1, Ty * 256]
        return audio.unsqueeze(1), w_ceil


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="folder for vits-<quality>.onnx (+ .json)")
    parser.add_argument("--quality", choices=sorted(DECODERS), default="medium")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(1234)
    model = Vits(args.quality).eval()
    with torch.no_grad():
        # Duration head: about 3 frames per id, as a real English medium voice speaks.
        model.dp[-1].weight.mul_(0.01)
        model.dp[-1].bias.fill_(math.log(3.0))
        model.dec.post.weight.mul_(0.1)
    params = sum(p.numel() for p in model.parameters())
    path = os.path.join(args.out, f"vits-{args.quality}.onnx")
    ids = torch.randint(0, 150, (1, 50))
    torch.onnx.export(
        model, (ids, torch.LongTensor([50]), torch.FloatTensor([0.667, 1.0, 0.8])), path,
        opset_version=15, input_names=["input", "input_lengths", "scales"],
        output_names=["output", "durations"],
        dynamic_axes={"input": {0: "batch_size", 1: "phonemes"},
                      "input_lengths": {0: "batch_size"},
                      "output": {0: "batch_size", 3: "time"},
                      "durations": {0: "batch_size", 2: "phonemes"}})
    config = {"dataset": f"vits-{args.quality}-random",
              "audio": {"sample_rate": RATE, "quality": args.quality},
              "espeak": {"voice": "en-us"}, "language": {"code": "en_US"},
              "inference": {"noise_scale": 0.667, "length_scale": 1, "noise_w": 0.8},
              "phoneme_type": "espeak", "phoneme_map": {}, "phoneme_id_map": PIPER_ID_MAP,
              "num_symbols": 256, "num_speakers": 1, "speaker_id_map": {},
              "hop_length": HOP, "piper_version": "1.0.0"}
    with open(path + ".json", "w", encoding="utf-8") as f:
        json.dump(config, f, ensure_ascii=False, indent=1)
    print(f"{path}: {params / 1e6:.1f} M parameters, {os.path.getsize(path) / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
