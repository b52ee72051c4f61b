#!/usr/bin/python3
"""The same-card peer of cosyvoice_llm_bench: upstream CosyVoice2's own LLM (Qwen2LM from the
upstream checkout, with tools/cosyvoice_export's Qwen2 stand-in for transformers) in PyTorch, on
the very weights a `export.py --random-weights --size SIZE --seed SEED` bundle holds (the same
seeded build) and the bench's request (10 prompt-text ids, 5 text ids, 55 prompt speech tokens).

  bench/cosyvoice_llm_peer.py --ref UPSTREAM [--size real|tiny] [--seed 0] [--device cuda]
                              [--dtype fp32|fp16|bf16] [--steps 48] [--batches 4,16,32]

Prints JSON lines (kind "peer"):
- batch 1: upstream's decode loop as is (Qwen2LM.inference: forward_one_step over its growing
  cache, llm_decoder, log_softmax, RAS sampling), stop ids disabled so every request runs
  `steps` tokens: the first token's time (the prefill) and the median gap between tokens;
- batch B: one batched forward_one_step of B rows over caches of the same length, then the head
  and log_softmax (no sampling: upstream has no batched loop), median ms per step.
Times are wall clock around CUDA synchronizations (upstream's sampling synchronizes each token
itself). Needs torch (the GPU check's device image, or Debian's python3-torch on the CPU)."""
import argparse
import json
import os
import statistics
import sys
import time

import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "cosyvoice_export"))
import upstream_modules  # noqa: E402

PROMPT_TEXT, TEXT, PROMPT_SPEECH = 10, 5, 55  # cosyvoice_llm_bench.cc BenchRequest
DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def bench_request(k, device):
    prompt_text = torch.tensor([[1000 + 7 * i + k for i in range(PROMPT_TEXT)]], device=device)
    text = torch.tensor([[2000 + 11 * i + k for i in range(TEXT)]], device=device)
    speech = torch.tensor([[(97 * i + k) % 6561 for i in range(PROMPT_SPEECH)]], device=device)
    return prompt_text, text, speech


def sync(device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def loop_batch1(llm, steps, device):
    """Upstream's Qwen2LM.inference, every token timed."""
    prompt_text, text, speech = bench_request(0, device)
    llm.stop_token_ids = []  # run to max_len (= 20 x 5 text ids = 100) or `steps`
    embedding = torch.zeros(1, 192, device=device)
    sync(device)
    start = time.perf_counter()
    stamps = []
    for _ in llm.inference(text, torch.tensor([TEXT], device=device), prompt_text,
                           torch.tensor([PROMPT_TEXT], device=device), speech,
                           torch.tensor([PROMPT_SPEECH], device=device), embedding):
        sync(device)
        stamps.append(time.perf_counter())
        if len(stamps) > steps:
            break
    gaps = [(b - a) * 1000 for a, b in zip(stamps, stamps[1:])]
    return {"first_token_ms": (stamps[0] - start) * 1000, "ms_per_step_median": statistics.median(gaps),
            "tokens_per_s": 1000 / statistics.median(gaps), "decode_steps": len(gaps)}


def batched_step(llm, batch, steps, device, dtype):
    """One batched forward_one_step of `batch` rows per step over their caches."""
    rows = [bench_request(k, device) for k in range(batch)]
    with torch.inference_mode():
        embeds = []
        for prompt_text, text, speech in rows:
            text_emb = llm.llm.model.model.embed_tokens(torch.cat([prompt_text, text], dim=1))
            sos = llm.llm_embedding.weight[llm.sos].reshape(1, 1, -1)
            task = llm.llm_embedding.weight[llm.task_id].reshape(1, 1, -1)
            embeds.append(torch.cat([sos, text_emb, task, llm.speech_embedding(speech)], dim=1))
        x = torch.cat(embeds, dim=0).to(dtype)
        s = x.shape[1]
        mask = torch.tril(torch.ones((batch, s, s), device=device)).to(torch.bool)
        hidden, cache = llm.llm.forward_one_step(x, masks=mask, cache=None)
        tokens = llm.llm_decoder(hidden[:, -1]).log_softmax(dim=-1)[:, :6561].argmax(dim=-1)
        times = []
        for _ in range(steps):
            sync(device)
            start = time.perf_counter()
            step_in = llm.speech_embedding.weight[tokens].reshape(batch, 1, -1)
            length = cache[0][0].shape[2] + 1
            masks = torch.ones((batch, 1, length), device=device).to(torch.bool)
            hidden, cache = llm.llm.forward_one_step(step_in, masks=masks, cache=cache)
            logp = llm.llm_decoder(hidden[:, -1]).log_softmax(dim=-1)
            tokens = logp[:, :6561].argmax(dim=-1)
            sync(device)
            times.append((time.perf_counter() - start) * 1000)
    ms = statistics.median(times)
    return {"ms_per_step_median": ms, "tokens_per_s": batch * 1000 / ms, "decode_steps": steps,
            "prefill_positions": s}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--ref", default=os.environ.get("VOXSERVE_COSYVOICE_REF"),
                   help="upstream CosyVoice checkout (VOXSERVE_COSYVOICE_REF)")
    p.add_argument("--size", choices=["tiny", "real"], default="real")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--dtype", choices=sorted(DTYPES), default="fp32")
    p.add_argument("--steps", type=int, default=48)
    p.add_argument("--batches", default="4,16,32")
    args = p.parse_args()
    if not args.ref:
        sys.exit("--ref (or VOXSERVE_COSYVOICE_REF): an upstream CosyVoice checkout")
    ref = upstream_modules.import_upstream(os.path.abspath(args.ref))
    yaml_path = os.path.join(ref, "examples", "libritts", "cosyvoice2", "conf", "cosyvoice2.yaml")
    _, llm, _, _ = upstream_modules.build(yaml_path, args.size, args.seed)
    dtype = DTYPES[args.dtype]
    llm = llm.to(args.device).to(dtype).eval()
    common = {"kind": "peer", "impl": "upstream Qwen2LM (PyTorch, Qwen2 stand-in)",
              "torch": torch.__version__, "device": args.device, "dtype": args.dtype,
              "size": args.size,
              "gpu": torch.cuda.get_device_name() if args.device.startswith("cuda") else ""}
    loop_batch1(llm, 4, args.device)  # warm-up (CUDA kernels, allocator)
    print(json.dumps({**common, "batch": 1, "mode": "inference loop",
                      **loop_batch1(llm, args.steps, args.device)}), flush=True)
    for batch in [int(b) for b in args.batches.split(",") if b]:
        batched_step(llm, batch, 2, args.device, dtype)  # warm-up
        print(json.dumps({**common, "batch": batch, "mode": "batched forward_one_step",
                          **batched_step(llm, batch, args.steps, args.device, dtype)}), flush=True)


if __name__ == "__main__":
    main()
