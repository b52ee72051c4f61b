#!/usr/bin/python3
"""CosyVoice3's parts for the oracle tests (CTest fixture cosyvoice3_tiny): upstream's
CosyVoice3LM and CausalMaskedDiffWithDiT, built from upstream's cosyvoice3.yaml at tiny sizes with
random weights (seeded), exported by the export tool's own code, with upstream's results on them
as goldens. One folder, not yet a bundle (export.py writes CosyVoice2 bundles only).

- LLM: its step graph (llm_step_graph.py, the head without bias), embed_tokens and
  speech_embedding, and upstream's prefill, decode step and greedy loop (goldens.py's
  llm.prefill / llm.decode / llm.greedy stages).
- Flow: flow_encoder.onnx and flow_encoder_stream.onnx (embedding + pre-lookahead layer, no
  encoder), the DiT estimator with a dynamic rows axis (flow.decoder.estimator.fp32.onnx) and its
  chunk-masked streaming variant (flow_estimator_stream.onnx), rand_noise, and upstream's
  flow.encoder / flow.estimator / flow.estimator_stream / flow.full / flow.stream /
  flow.stream_encoder goldens (goldens.py).
- HiFT (CausalHiFTGenerator): hift_f0.onnx (mel + 3 frames of right context -> f0) and
  hift_decoder.onnx (mel + 4 frames of right context, source STFT -> magnitude, phase), the
  source Linear, the STFT window and the first TINY_NOISE_SECONDS of the fixed noise table, and
  upstream's hift.f0 / hift.source / hift.decoder / hift.full / hift.stream goldens.

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


# The causal HiFT's fixed noise table (SineGen2.sine_waves, upstream 300 s x 24 kHz x 9): the tiny
# folder keeps its first 10 s, enough for every mel here.
TINY_NOISE_SECONDS = 10


def write_hift(out, yaml_path, w, hop_mels):
    """CosyVoice3's CausalHiFTGenerator: its graphs, tensors and upstream's results. hop_mels: the
    streaming flow's mels, hop by hop (flow.stream/N), vocoded whole and as token2wav streams
    them (cli/model.py:436-453: the mel accumulated, all of it vocoded each hop, the audio from
    the last offset on)."""
    import numpy as np
    import torch

    import graphs
    import upstream_modules

    _, _, _, hift = upstream_modules.build(yaml_path, "tiny", SEED, parts=("hift",))
    # Before inference moves the f0 predictor to float64 (generator.py:716).
    graphs.export_causal_hift(hift, os.path.join(out, "hift_f0.onnx"),
                              os.path.join(out, "hift_decoder.onnx"))
    sin_gen = hift.m_source.l_sin_gen
    tensors = {"hift_source_linear_weight": hift.m_source.l_linear.weight,
               "hift_source_linear_bias": hift.m_source.l_linear.bias,
               "hift_stft_window": hift.stft_window,
               "hift_noise_table": sin_gen.sine_waves[0, :TINY_NOISE_SECONDS * 24000]}
    for name, value in tensors.items():
        np.save(os.path.join(out, "tensors", f"{name}.npy"),
                np.ascontiguousarray(value.detach().to(torch.float32).numpy()))
    mel = torch.cat(hop_mels, dim=1).unsqueeze(0)  # [1, 80, T]
    lookahead = hift.f0_predictor.condnet[0].causal_padding
    predictor = hift.f0_predictor.to(torch.float64)
    for n, finalize in enumerate((True, False)):
        body, context = (mel, torch.zeros(1, 80, lookahead)) if finalize else \
            (mel[:, :, :-lookahead], mel[:, :, -lookahead:])
        f0 = predictor(mel.to(torch.float64), finalize=finalize)
        w.stage(f"hift.f0/{n}", {"mel": body, "context": context}, {"f0": f0}, 1e-3,
                "upstream's float64 predictor; finalize" if finalize else
                "upstream's float64 predictor; the last 3 frames as context")
    # A voiced contour (the random predictor never reaches the 10 Hz threshold): 90-310 Hz with
    # an unvoiced gap, through upstream's f0_upsamp and source module (fixed tables).
    frames = 60
    f0 = 200 + 110 * torch.sin(torch.arange(frames, dtype=torch.float32) / 7)
    f0[20:28] = 0
    s = hift.f0_upsamp(f0[None, None]).transpose(1, 2)
    sines, uv, _ = sin_gen(s)
    source, _, _ = hift.m_source(s)
    w.stage("hift.source/0", {"f0": f0[None]},
            {"sines": sines[0], "uv": uv[0, :, 0], "source": source[0, :, 0]}, 1e-3,
            "causal SineGen2: phase upsampled nearest, the fixed noise table from sample 0")
    f0 = hift.f0_predictor(mel.to(torch.float64), finalize=True).to(mel)
    source, _, _ = hift.m_source(hift.f0_upsamp(f0[:, None]).transpose(1, 2))
    source = source.transpose(1, 2)
    real, imag = hift._stft(source.squeeze(1))
    source_stft = torch.cat([real, imag], dim=1)
    look = hift.conv_pre_look_right
    padded = torch.cat([mel, torch.zeros(1, 80, look)], dim=2)
    magnitude, phase = graphs.CausalHiftDecoder(hift)(padded, source_stft)
    w.stage("hift.decoder/0", {"mel": padded, "source_stft": source_stft},
            {"magnitude": magnitude, "phase": phase}, 1e-3, "finalize: 4 zero frames of context")
    speech, _ = hift.inference(speech_feat=mel, finalize=True)
    w.stage("hift.full/0", {"mel": mel[0]}, {"speech": speech[0]}, 1e-3,
            "inference(finalize=True): f0 in float64, source, decode, clamp")
    accumulated, offset = None, 0
    for n, hop in enumerate(hop_mels):
        finalize = n == len(hop_mels) - 1
        accumulated = hop[None] if accumulated is None else torch.cat([accumulated, hop[None]], 2)
        speech, _ = hift.inference(speech_feat=accumulated, finalize=finalize)
        emitted = speech[0, offset:]
        offset += emitted.shape[0]
        w.stage(f"hift.stream/{n}", {"mel": hop, "finalize": torch.tensor([int(finalize)])},
                {"audio": emitted}, 1e-3,
                f"hop {n}: the accumulated mel vocoded {'finally' if finalize else 'non-final'}"
                f", audio from sample {offset - emitted.shape[0]}")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    if not os.environ.get("VOXSERVE_COSYVOICE_REF"):
        print("VOXSERVE_COSYVOICE_REF is unset: no CosyVoice3 parts written, their tests skip")
        shutil.rmtree(args.out, ignore_errors=True)
        return
    import numpy as np
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
        hop_mels = [torch.from_numpy(np.load(os.path.join(out, s["outputs"]["mel"])))
                    for s in w.stages if s["name"].startswith("flow.stream/")]
        write_hift(out, yaml_path, w, hop_mels)
        w.finish({"family": "cosyvoice3", "sos": llm.sos, "task_id": llm.task_id,
                  "stop_tokens": list(llm.stop_token_ids), "texts": goldens.TEXTS,
                  "static_chunk_size": flow.decoder.estimator.static_chunk_size})
    print(f"CosyVoice3 parts written to {out}")


if __name__ == "__main__":
    main()
