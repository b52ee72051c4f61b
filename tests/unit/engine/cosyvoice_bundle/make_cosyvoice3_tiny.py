#!/usr/bin/python3
"""CosyVoice3's parts for the oracle tests (CTest fixture cosyvoice3_tiny): upstream's
CosyVoice3LM and CausalMaskedDiffWithDiT, built from upstream's cosyvoice3.yaml at tiny sizes with
random weights (seeded), exported by the export tool's own code, with upstream's results on them
as goldens. One folder, not yet a bundle: CosyVoice3's causal HiFT is not exported yet.

- LLM: its step graph (llm_step_graph.py, the head without bias), embed_tokens and
  speech_embedding, and upstream's prefill, decode step and greedy loop (goldens.py's
  llm.prefill / llm.decode / llm.greedy stages).
- Flow: flow_encoder.onnx and flow_encoder_stream.onnx (embedding + pre-lookahead layer, no
  encoder), the DiT estimator with a dynamic rows axis (flow.decoder.estimator.fp32.onnx) and its
  chunk-masked streaming variant (flow_estimator_stream.onnx), rand_noise, and upstream's
  flow.encoder / flow.estimator / flow.estimator_stream / flow.full / flow.stream /
  flow.stream_encoder goldens (goldens.py).

Without VOXSERVE_COSYVOICE_REF it writes nothing (the tests skip).

  make_cosyvoice3_tiny.py --out DIR"""
import argparse
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "tools", "cosyvoice_export"))

ENDOFPROMPT = 151646  # <|endofprompt|> (reference/model-interfaces.md 3.5)
SEED = 7


def write_llm(out, yaml_path, w):
    import numpy as np
    import torch

    import goldens
    import llm_step_graph
    import tokenizer_files
    import upstream_modules

    _, llm, _, _ = upstream_modules.build(yaml_path, "tiny", SEED, parts=("llm",))
    qwen = llm.llm.model
    llm_step_graph.export(qwen, llm.llm_decoder, os.path.join(out, "llm_step.onnx"), "fp32", 8192)
    np.save(os.path.join(out, "tensors", "embed_tokens.npy"), qwen.model.embed_tokens.weight.numpy())
    np.save(os.path.join(out, "tensors", "speech_embedding.npy"),
            llm.speech_embedding.weight.numpy())
    torch.manual_seed(SEED + 1)
    # Zero-shot as upstream's callers write it: the system text, <|endofprompt|>, then the
    # transcript (upstream asserts the token, llm.py:476-479).
    prompt_ids = torch.tensor(tokenizer_files.encode("You are a helpful assistant.") +
                              [ENDOFPROMPT] + tokenizer_files.encode(goldens.PROMPT_TEXT),
                              dtype=torch.int32)
    prompt_tokens = torch.randint(0, 6561, (20,), dtype=torch.int32)
    for n, text in enumerate(goldens.TEXTS):
        ids = torch.tensor(tokenizer_files.encode(text), dtype=torch.int32)
        goldens._llm(w, n, llm, prompt_ids, ids, prompt_tokens)
        goldens._llm_greedy(w, n, llm, prompt_ids, ids, prompt_tokens)
    return llm


def check_rotary_standin():
    """The goldens are only as good as the stand-in the DiT runs on here: hold it to the rotation
    x-transformers 2.11.24 defines, written independently as complex products: channel pairs
    (2k, 2k+1) of the first `dim` channels turn by position x base^(-2k/dim), the rest pass."""
    import torch
    from x_transformers.x_transformers import RotaryEmbedding, apply_rotary_pos_emb
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
        sys.exit(f"the x-transformers rotary stand-in is off by {error}")


def write_flow(out, yaml_path, w):
    import numpy as np
    import torch

    import goldens
    import graphs
    import upstream_modules

    _, _, flow, _ = upstream_modules.build(yaml_path, "tiny", SEED, parts=("flow",))
    check_rotary_standin()
    graphs.export_flow_encoder(flow, os.path.join(out, "flow_encoder.onnx"))
    graphs.export_flow_stream_encoder(flow, os.path.join(out, "flow_encoder_stream.onnx"))
    estimator = flow.decoder.estimator
    graphs.export_estimator(estimator, os.path.join(out, "flow.decoder.estimator.fp32.onnx"),
                            dynamic_batch=True)
    graphs.export_estimator(estimator, os.path.join(out, "flow_estimator_stream.onnx"),
                            dynamic_batch=True, streaming=True)
    np.save(os.path.join(out, "tensors", "rand_noise.npy"), flow.decoder.rand_noise.numpy())
    torch.manual_seed(SEED + 2)
    # 30 prompt tokens: prompt + first hop spans the DiT's 50-frame chunks unevenly.
    prompt_tokens = torch.randint(0, 6561, (30,), dtype=torch.int32)
    prompt_mel = torch.randn(2 * len(prompt_tokens), 80)
    embedding = torch.randn(192)
    for n, count in enumerate((12, 40)):
        speech = torch.randint(0, 6561, (count,), dtype=torch.int32)
        goldens._flow(w, n, flow, prompt_tokens, speech, prompt_mel, embedding)
    goldens.flow_stream(w, flow, prompt_tokens, prompt_mel, embedding)
    return flow


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    if not os.environ.get("VOXSERVE_COSYVOICE_REF"):
        print("VOXSERVE_COSYVOICE_REF is unset: no CosyVoice3 parts written, their tests skip")
        shutil.rmtree(args.out, ignore_errors=True)
        return
    import torch

    import goldens
    import upstream_modules

    ref = upstream_modules.import_upstream()
    yaml_path = os.path.join(ref, "examples", "libritts", "cosyvoice3", "conf", "cosyvoice3.yaml")
    out = args.out
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "tensors"))
    with torch.no_grad():
        w = goldens.Writer(out)
        llm = write_llm(out, yaml_path, w)
        flow = write_flow(out, yaml_path, w)
        w.finish({"family": "cosyvoice3", "sos": llm.sos, "task_id": llm.task_id,
                  "stop_tokens": list(llm.stop_token_ids), "texts": goldens.TEXTS,
                  "static_chunk_size": flow.decoder.estimator.static_chunk_size})
    print(f"CosyVoice3 parts written to {out}")


if __name__ == "__main__":
    main()
