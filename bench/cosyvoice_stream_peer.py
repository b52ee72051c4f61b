#!/usr/bin/python3
"""The same-card peer of the served streaming points (bench/cosyvoice_bench.sh): upstream
CosyVoice2's own CosyVoice2Model (cli/model.py) streaming with tts(stream=True), in PyTorch, on
the very weights an `export.py --random-weights --size SIZE --seed SEED` bundle holds (the same
seeded build, tools/cosyvoice_export/upstream_modules.py), at c=1 (one request after another) and
c=N (N threads, one tts() call each, as upstream's own servers run requests). --family
cosyvoice3: upstream's CosyVoice3Model on an `export.py --family cosyvoice3` bundle's weights
(its prompt text ends with <|endofprompt|>, which CosyVoice3LM asserts); --whole: tts(stream=False)
(kind "whole-peer"; its first chunk is the whole audio).

  bench/cosyvoice_stream_peer.py --ref UPSTREAM [--size real|tiny] [--seed 0] [--device cuda]
                                 [--concurrency 1,4] [--text-ids 10] [--requests 2]
                                 [--family cosyvoice2|cosyvoice3] [--whole]
                                 [--prompt-speech 55]

Each request: 10 prompt-text ids, --text-ids text ids, 55 prompt speech tokens with their 110
prompt mel frames and speaker embeddings (random, fixed by the seed); the LLM's stop ids are
disabled, so each request runs upstream's max_len = 20 x text ids tokens (200 by default: 8 s of
audio) and every implementation makes the same amount of audio.

Prints one JSON line per concurrency (kind "stream-peer"): first chunk P50 / max (s after the
request started), aggregate RTF (wall of the point / total audio, as upstream's Triton client
computes it), per-request RTF mean, and continuity: the share of streams whose every chunk
arrived before a client playing at 1x from its first chunk ran out of audio. Upstream is run as
it is: its loop polls every 0.1 s (model.py:347), and its hop length is one attribute of the
model that concurrent streams grow together (model.py:360; reset before each c=1 request)."""
import argparse
import json
import os
import statistics
import sys
import threading
import time

import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "cosyvoice_export"))
import upstream_modules  # noqa: E402

SAMPLE_RATE = 24000
PROMPT_TEXT, PROMPT_SPEECH = 10, 55
ENDOFPROMPT = 151646


def request(k, text_ids, mel_bins):
    g = torch.Generator().manual_seed(1000 + k)
    prompt_text = torch.randint(100, 5000, (1, PROMPT_TEXT), generator=g, dtype=torch.int32)
    prompt_text[0, -1] = ENDOFPROMPT  # CosyVoice3LM asserts it (llm.py:479); CosyVoice2 reads an id
    return {
        "text": torch.randint(100, 5000, (1, text_ids), generator=g, dtype=torch.int32),
        "prompt_text": prompt_text,
        "llm_prompt_speech_token": torch.randint(0, 6561, (1, PROMPT_SPEECH), generator=g,
                                                 dtype=torch.int32),
        "prompt_speech_feat": torch.randn(1, 2 * PROMPT_SPEECH, mel_bins, generator=g) * 0.5,
        "embedding": torch.randn(1, 192, generator=g),
    }


STREAM = True  # --whole: False


class NoStopIds(torch.nn.Module):
    """The LLM's head with the stop ids' logits at -inf."""

    def __init__(self, head, speech_tokens):
        super().__init__()
        self.head, self.speech_tokens = head, speech_tokens

    def forward(self, x):
        y = self.head(x)
        y[..., self.speech_tokens:] = float("-inf")
        return y


def speak(model, inputs):
    """One request: (seconds after start, samples) per chunk, and the latency."""
    arrivals = []
    start = time.perf_counter()
    for out in model.tts(text=inputs["text"], flow_embedding=inputs["embedding"],
                         llm_embedding=inputs["embedding"], prompt_text=inputs["prompt_text"],
                         llm_prompt_speech_token=inputs["llm_prompt_speech_token"],
                         flow_prompt_speech_token=inputs["llm_prompt_speech_token"],
                         prompt_speech_feat=inputs["prompt_speech_feat"], stream=STREAM):
        arrivals.append((time.perf_counter() - start, out["tts_speech"].shape[-1]))
    return arrivals, time.perf_counter() - start


def continuous(arrivals):
    """Whether a 1x player started at the first chunk never ran out of audio."""
    first, played = arrivals[0][0], 0.0
    for at, samples in arrivals:
        if at > first + played + 1e-3:
            return False
        played += samples / SAMPLE_RATE
    return True


def point(model, concurrency, requests, text_ids, mel_bins):
    inputs = [request(k, text_ids, mel_bins) for k in range(concurrency * requests)]
    results = [None] * len(inputs)

    def client(c):
        for r in range(requests):
            k = c * requests + r
            if concurrency == 1:
                model.token_hop_len = 25  # upstream keeps the grown hop on the model (both)
            results[k] = speak(model, inputs[k])

    start = time.perf_counter()
    threads = [threading.Thread(target=client, args=(c,)) for c in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    firsts = [arrivals[0][0] for arrivals, _ in results]
    audio = [sum(n for _, n in arrivals) / SAMPLE_RATE for arrivals, _ in results]
    return {"concurrency": concurrency, "requests": len(results),
            "first_chunk_p50_s": statistics.median(firsts), "first_chunk_max_s": max(firsts),
            "aggregate_rtf": wall / sum(audio),
            "request_rtf_mean": statistics.mean(lat / a for (_, lat), a in zip(results, audio)),
            "audio_s_each": statistics.mean(audio),
            "continuity": sum(continuous(arrivals) for arrivals, _ in results) / len(results)}


def main():
    global STREAM, PROMPT_SPEECH
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--ref", default=os.environ.get("VOXSERVE_COSYVOICE_REF"),
                   help="upstream CosyVoice checkout (VOXSERVE_COSYVOICE_REF)")
    p.add_argument("--size", choices=["tiny", "real"], default="real")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--concurrency", default="1,4")
    p.add_argument("--requests", type=int, default=2, help="per client, one after another")
    p.add_argument("--text-ids", type=int, default=10)
    p.add_argument("--family", choices=["cosyvoice2", "cosyvoice3"], default="cosyvoice2")
    p.add_argument("--whole", action="store_true", help="tts(stream=False)")
    p.add_argument("--prompt-speech", type=int, default=PROMPT_SPEECH,
                   help="prompt speech tokens (bench/cosyvoice_rtf_bench's voice: 75)")
    args = p.parse_args()
    if not args.ref:
        sys.exit("--ref (or VOXSERVE_COSYVOICE_REF): an upstream CosyVoice checkout")
    STREAM, PROMPT_SPEECH = not args.whole, args.prompt_speech
    ref = upstream_modules.import_upstream(os.path.abspath(args.ref))
    from cosyvoice.cli import model as upstream_model  # noqa: E402 (upstream, importable now)
    cls = upstream_model.CosyVoice3Model if args.family == "cosyvoice3" else \
        upstream_model.CosyVoice2Model
    yaml_path = os.path.join(ref, "examples", "libritts", args.family, "conf",
                             f"{args.family}.yaml")
    _, llm, flow, hift = upstream_modules.build(yaml_path, args.size, args.seed)
    # Every request runs max_len tokens (see the docstring): no stop id is ever sampled (the
    # head's columns past the speech tokens masked: CosyVoice3 has 200 of them, and the flow's
    # embedding has no row for any).
    llm.llm_decoder = NoStopIds(llm.llm_decoder, llm.speech_token_size)
    device = torch.device(args.device)
    model = cls(llm.to(device), flow.to(device), hift.to(device), fp16=False)
    model.device = device
    mel_bins = flow.output_size if hasattr(flow, "output_size") else 80
    common = {"kind": "stream-peer" if STREAM else "whole-peer", "family": args.family,
              "impl": f"upstream {cls.__name__}.tts(stream={STREAM}), PyTorch",
              "torch": torch.__version__, "device": args.device, "size": args.size,
              "text_ids": args.text_ids,
              "gpu": torch.cuda.get_device_name() if args.device.startswith("cuda") else ""}
    with torch.inference_mode():
        speak(model, request(999, 2, mel_bins))  # warm-up (kernels, allocator)
        for c in [int(c) for c in args.concurrency.split(",") if c]:
            print(json.dumps({**common, **point(model, c, args.requests, args.text_ids, mel_bins)}),
                  flush=True)


if __name__ == "__main__":
    main()
