"""Small random networks with exactly the signatures of upstream's two trained-only ONNX files
(upstream ships campplus.onnx and speech_tokenizer_v2.onnx without their code), used by the
random-weight bundles; a real export copies upstream's files instead.

- campplus.onnx: fbank [1, T, 80] float (16 kHz, mean-normalised) -> x-vector [1, 192]
  (cosyvoice/cli/frontend.py:108-118).
- speech_tokenizer_v2.onnx: Whisper log-mel [1, 128, T] float + int32 [1] = T -> token ids
  [1, T // 4] in [0, 6561) at 25 per second from 100 frames per second (frontend.py:95-106).
"""
import torch
from graphs import TORCHSCRIPT  # the exporter choice, as for our own graphs
from torch import nn

SPEAKER_DIM = 192
FSQ_LEVELS, FSQ_DIMS = 3, 8  # 3^8 = 6561 codes, as upstream's FSQ codebook


class CampplusStandin(nn.Module):
    def __init__(self):
        super().__init__()
        self.frame = nn.Linear(80, 64)
        self.out = nn.Linear(64, SPEAKER_DIM)

    def forward(self, fbank):  # [1, T, 80]
        return self.out(torch.tanh(self.frame(fbank)).mean(dim=1))


class SpeechTokenizerStandin(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Conv1d(128, FSQ_DIMS, kernel_size=4, stride=4)  # 100 Hz -> 25 Hz

    def forward(self, logmel, length):  # [1, 128, T], int32 [1]
        frames = logmel.shape[2] // 4 * 4
        # `length` is part of upstream's signature; frames past it are zeroed as padding.
        valid = (torch.arange(logmel.shape[2]).unsqueeze(0) < length.to(torch.int64).unsqueeze(1))
        z = torch.tanh(self.down((logmel * valid.unsqueeze(1).to(logmel.dtype))[:, :, :frames]))
        digits = torch.round((z + 1) * (FSQ_LEVELS - 1) / 2).clamp(0, FSQ_LEVELS - 1)  # [1, 8, T/4]
        weights = (FSQ_LEVELS ** torch.arange(FSQ_DIMS)).to(torch.float32).view(1, FSQ_DIMS, 1)
        return (digits * weights).sum(dim=1).to(torch.int64)


def export(module, args, path, input_names, output_names, dynamic_axes):
    torch.onnx.export(module, args, path, input_names=input_names, output_names=output_names,
                      dynamic_axes=dynamic_axes, opset_version=17, do_constant_folding=True,
                      **TORCHSCRIPT)


def export_campplus(module, path):
    export(module, (torch.randn(1, 120, 80),), path, ["input"], ["output"],
           {"input": {1: "frames"}})


def export_speech_tokenizer(module, path):
    export(module, (torch.randn(1, 128, 200), torch.tensor([200], dtype=torch.int32)), path,
           ["feats", "feats_length"], ["indices"],
           {"feats": {2: "frames"}, "indices": {1: "tokens"}})
