#!/usr/bin/python3
"""Writes a voxserve CosyVoice bundle (docs/cosyvoice-bundle.md).

  export.py --model-dir DIR --out BUNDLE           a downloaded CosyVoice2-0.5B or
                                                   Fun-CosyVoice3-0.5B model directory
  export.py --random-weights --size tiny --out B   upstream's modules, random weights (seeded)
  --family cosyvoice2|cosyvoice3: the model family (with --model-dir: from its yaml's name)
  add --fp16: also OUT-fp16, the bundle with its flow and HiFT graphs in float16 (fp16.py)
  --llm-precisions fp32,fp16,bf16 (default): the LLM step graphs written (llm_step_graph.py);
  fp32 is always written (the CPU's graph), fp16 and bf16 are CUDA's

Needs upstream's checkout ($VOXSERVE_COSYVOICE_REF, default ../shared/oracles/CosyVoice) and, for
the packages Debian lacks, the stand-ins in standins/. With --model-dir the upstream ONNX files
(campplus, speech tokenizer, estimator) are copied as they are and the rest is exported from
llm.pt, flow.pt and hift.pt."""
import argparse
import hashlib
import json
import os
import shutil
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fp16  # noqa: E402
import goldens  # noqa: E402
import graphs  # noqa: E402
import llm_step_graph  # noqa: E402
import manifest  # noqa: E402
import prompt_standins  # noqa: E402
import tokenizer_files  # noqa: E402
import upstream_modules  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--model-dir", help="CosyVoice2-0.5B directory (cosyvoice2.yaml, llm.pt, ...)")
    src.add_argument("--random-weights", action="store_true", help="random weights, seeded")
    p.add_argument("--family", choices=["cosyvoice2", "cosyvoice3"],
                   help="with --random-weights: the family (default cosyvoice2); with "
                        "--model-dir: detected (cosyvoice3.yaml or cosyvoice2.yaml)")
    p.add_argument("--size", choices=["tiny", "real"], default="tiny",
                   help="with --random-weights: tiny widths for tests, or the real dimensions")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="bundle directory to write (replaced)")
    p.add_argument("--no-goldens", action="store_true", help="skip goldens/")
    p.add_argument("--fp16", action="store_true",
                   help="also write OUT-fp16: flow and HiFT graphs in float16 (fp16.py)")
    p.add_argument("--llm-precisions", default="fp32,fp16,bf16",
                   help="LLM step graphs to write: fp32 (always), fp16, bf16 (CUDA's)")
    p.add_argument("--estimator-batch", choices=["dynamic", "fixed"], default="dynamic",
                   help="dynamic: the flow estimator exported from the checkpoint with a dynamic "
                        "rows axis, so one call serves several streams' flow runs (the engine's "
                        "cross-stream batching); fixed: one CFG pair per call, upstream's "
                        "signature (with --model-dir: upstream's own graph, copied)")
    p.add_argument("--skip-if-current", action="store_true",
                   help="with --model-dir: leave OUT as it is when it was exported from the same "
                        "checkpoint files (their names, sizes and times) by this bundle format "
                        "(a Job that runs again does no work)")
    p.add_argument("--if-oracle", action="store_true",
                   help="test fixtures: when VOXSERVE_COSYVOICE_REF is unset, say so and exit 0 "
                        "without writing (the tests that need the bundle then skip)")
    return p.parse_args()


def _load_state(module, path):
    """Every parameter must come from the checkpoint; extra keys (e.g. a rotary inv_freq buffer
    some transformers versions save) are reported and ignored."""
    state = torch.load(path, map_location="cpu")
    result = module.load_state_dict(state, strict=False)
    if result.missing_keys:
        sys.exit(f"{path}: no weights for {len(result.missing_keys)} parameters, e.g. "
                 f"{result.missing_keys[:5]}")
    if result.unexpected_keys:
        print(f"{path}: ignored {len(result.unexpected_keys)} keys, e.g. {result.unexpected_keys[:3]}")


# CosyVoice3's fixed noise table (SineGen2.sine_waves, 300 s upstream, 259 MB) is kept for this
# many seconds of audio; past them its rows are read again (docs/cosyvoice-bundle.md).
NOISE_TABLE_SECONDS = {"tiny": 10, "real": 60}
SILENT_TOKENS = [1, 2, 28, 29, 55, 248, 494, 2241, 2242, 2322, 2323]


def model_family(args):
    if args.model_dir:
        found = [f for f in ("cosyvoice3", "cosyvoice2")
                 if os.path.exists(os.path.join(args.model_dir, f"{f}.yaml"))]
        if not found:
            sys.exit(f"{args.model_dir}: neither cosyvoice3.yaml nor cosyvoice2.yaml")
        if args.family and args.family != found[0]:
            sys.exit(f"--family {args.family}, but {args.model_dir} holds {found[0]}.yaml")
        return found[0]
    return args.family or "cosyvoice2"


def build_modules(args, ref, family):
    if args.model_dir:
        yaml_path = os.path.join(args.model_dir, f"{family}.yaml")
        qwen_json = os.path.join(args.model_dir, "CosyVoice-BlankEN", "config.json")
        import json
        with open(qwen_json) as f:
            qwen = json.load(f)
        config, llm, flow, hift = upstream_modules.build(yaml_path, "real", args.seed, qwen)
        _load_state(llm, os.path.join(args.model_dir, "llm.pt"))
        _load_state(flow, os.path.join(args.model_dir, "flow.pt"))
        # hift.pt keys carry a "generator." prefix in some snapshots (cosyvoice/cli/model.py).
        state = torch.load(os.path.join(args.model_dir, "hift.pt"), map_location="cpu")
        hift.load_state_dict({k.replace("generator.", "", 1) if k.startswith("generator.") else k:
                              v for k, v in state.items()})
        return config, llm, flow, hift
    yaml_path = os.path.join(ref, "examples", "libritts", family, "conf", f"{family}.yaml")
    return upstream_modules.build(yaml_path, args.size, args.seed)


def checkpoint_fingerprint(model_dir, estimator_batch):
    """SHA-256 over the checkpoint's file names, sizes and modification times and the export's
    choices: a new download (another revision, a repaired file) changes it. "hift rows": bundles
    exported before HiFT's graphs had their rows axis are exported again, once."""
    digest = hashlib.sha256(
        f"format {manifest.FORMAT_VERSION} estimator {estimator_batch} hift rows\n".encode())
    for folder, _, names in sorted(os.walk(model_dir)):
        for name in sorted(names):
            path = os.path.join(folder, name)
            stat = os.stat(path)
            digest.update(f"{os.path.relpath(path, model_dir)} {stat.st_size} "
                          f"{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def is_current(out, fingerprint):
    try:
        with open(os.path.join(out, "manifest.json")) as f:
            return json.load(f).get("source", {}).get("fingerprint") == fingerprint
    except (OSError, ValueError):
        return False


def main():
    args = parse_args()
    started = time.time()
    fingerprint = (checkpoint_fingerprint(args.model_dir, args.estimator_batch)
                   if args.model_dir else None)
    if args.skip_if_current and fingerprint and is_current(args.out, fingerprint):
        print(f"bundle {args.out} is current (exported from these checkpoint files): kept")
        return
    if args.if_oracle and not os.environ.get("VOXSERVE_COSYVOICE_REF"):
        print("VOXSERVE_COSYVOICE_REF is unset: no CosyVoice bundle written, its tests skip")
        if os.path.exists(os.path.join(args.out, "manifest.json")):
            shutil.rmtree(args.out)
        return
    ref = upstream_modules.import_upstream()
    family = model_family(args)
    v3 = family == "cosyvoice3"
    config, llm, flow, hift = build_modules(args, ref, family)
    if v3:
        from standins import x_transformers_rotary
        rotary = sys.modules["x_transformers.x_transformers"].RotaryEmbedding
        if rotary is x_transformers_rotary.RotaryEmbedding:  # the stand-in, not the package
            x_transformers_rotary.self_check()
    out = args.out
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(os.path.join(out, "tensors"))
    qwen = llm.llm.model
    c = qwen.config
    g = {}

    # Upstream's trained-only graphs: copied, or stand-ins with their signatures.
    campplus = tokenizer = None
    estimator_path = os.path.join(out, "flow.decoder.estimator.fp32.onnx")
    # CosyVoice3's speech tokenizer v3 keeps v2's signature (frontend.py's one code path).
    speech_tokenizer = "speech_tokenizer_v3.onnx" if v3 else "speech_tokenizer_v2.onnx"
    if args.model_dir:
        for name in ("campplus.onnx", speech_tokenizer):
            shutil.copy(os.path.join(args.model_dir, name), os.path.join(out, name))
        origin = "upstream"
    else:
        torch.manual_seed(args.seed + 1)
        campplus, tokenizer = prompt_standins.CampplusStandin(), prompt_standins.SpeechTokenizerStandin()
        prompt_standins.export_campplus(campplus, os.path.join(out, "campplus.onnx"))
        prompt_standins.export_speech_tokenizer(tokenizer, os.path.join(out, speech_tokenizer))
        origin = "stand-in"
    # The estimator: upstream's own file only where asked for as it is (fixed rows); otherwise
    # exported from the checkpoint's weights (the same module upstream exported).
    estimator_origin = "export"
    if args.model_dir and args.estimator_batch == "fixed":
        shutil.copy(os.path.join(args.model_dir, "flow.decoder.estimator.fp32.onnx"), estimator_path)
        estimator_origin = "upstream"
    else:
        graphs.export_estimator(flow.decoder.estimator, estimator_path,
                                dynamic_batch=args.estimator_batch == "dynamic")
    g["campplus"] = manifest.graph_entry(out, "campplus.onnx", origin)
    g["speech_tokenizer"] = manifest.graph_entry(out, speech_tokenizer, origin)
    g["flow_estimator"] = manifest.graph_entry(out, "flow.decoder.estimator.fp32.onnx",
                                               estimator_origin)
    if v3:
        # The DiT's chunk-masked attention for the streaming hops (docs/cosyvoice-bundle.md).
        graphs.export_estimator(flow.decoder.estimator,
                                os.path.join(out, "flow_estimator_stream.onnx"),
                                dynamic_batch=args.estimator_batch == "dynamic", streaming=True)
        g["flow_estimator_stream"] = manifest.graph_entry(out, "flow_estimator_stream.onnx",
                                                          "export")

    # The rotary tables hold the positions a KV cache row can reach: Qwen2's own limit (tiny
    # bundles: 8192, enough for the benchmarks' largest capacity, at a fraction of the size).
    positions = 8192 if args.random_weights and args.size == "tiny" else \
        getattr(c, "max_position_embeddings", 32768)
    precisions = sorted({"fp32", *[p for p in args.llm_precisions.split(",") if p]},
                        key=list(llm_step_graph.PRECISIONS).index)
    for precision in precisions:
        if precision not in llm_step_graph.PRECISIONS:
            sys.exit(f"--llm-precisions: {precision} is not one of fp32, fp16, bf16")
        role = "llm_step" if precision == "fp32" else f"llm_step_{precision}"
        llm_step_graph.export(qwen, llm.llm_decoder, os.path.join(out, f"{role}.onnx"),
                              precision, positions)
        g[role] = manifest.graph_entry(out, f"{role}.onnx", "export")
    graphs.export_flow_encoder(flow, os.path.join(out, "flow_encoder.onnx"))
    g["flow_encoder"] = manifest.graph_entry(out, "flow_encoder.onnx", "export")
    # Optional role: the chunk-causal encoder of the streaming hops (docs/cosyvoice-bundle.md).
    graphs.export_flow_stream_encoder(flow, os.path.join(out, "flow_encoder_stream.onnx"))
    g["flow_encoder_stream"] = manifest.graph_entry(out, "flow_encoder_stream.onnx", "export")
    (graphs.export_causal_hift if v3 else graphs.export_hift)(
        hift, os.path.join(out, "hift_f0.onnx"), os.path.join(out, "hift_decoder.onnx"))
    g["hift_f0"] = manifest.graph_entry(out, "hift_f0.onnx", "export")
    g["hift_decoder"] = manifest.graph_entry(out, "hift_decoder.onnx", "export")

    for module in (llm, flow, hift):
        module.eval()
    t = {}
    size_name = "real" if args.model_dir else args.size
    with torch.no_grad():
        arrays = [("embed_tokens", qwen.model.embed_tokens.weight),
                  ("speech_embedding", llm.speech_embedding.weight),
                  ("rand_noise", flow.decoder.rand_noise),
                  ("hift_source_linear_weight", hift.m_source.l_linear.weight),
                  ("hift_source_linear_bias", hift.m_source.l_linear.bias),
                  ("hift_stft_window", hift.stft_window)]
        if v3:  # sos and task_id are speech_embedding rows; the causal source's noise table
            rows = NOISE_TABLE_SECONDS[size_name] * config["sample_rate"]
            arrays.append(("hift_noise_table", hift.m_source.l_sin_gen.sine_waves[0, :rows]))
        else:
            arrays.append(("llm_embedding", llm.llm_embedding.weight))
        for name, array in arrays:
            t[name] = manifest.tensor_entry(out, f"tensors/{name}.npy",
                                            array.detach().to(torch.float32).numpy())

    if args.model_dir:
        blank = os.path.join(args.model_dir, "CosyVoice-BlankEN")
        files = ["vocab.json", "merges.txt", "tokenizer_config.json"]
        os.makedirs(os.path.join(out, "tokenizer"))
        for name in files:
            shutil.copy(os.path.join(blank, name), os.path.join(out, "tokenizer", name))
    else:
        files = tokenizer_files.write(os.path.join(out, "tokenizer"))

    flow_cfg, hift_cfg = config["flow"], config["hift"]
    sampling = config["llm"]["sampling"]
    doc = {
        "format": manifest.FORMAT, "format_version": manifest.FORMAT_VERSION,
        "family": family,
        "source": {"kind": "checkpoint" if args.model_dir else "random-weights",
                   "size": "real" if args.model_dir else args.size, "seed": args.seed,
                   **({"fingerprint": fingerprint} if fingerprint else {})},
        "audio": {"prompt_sample_rate": 16000, "sample_rate": config["sample_rate"],
                  "mel_bins": 80, "mel_frame_rate": 50, "samples_per_mel_frame": 480,
                  "speaker_embedding_dim": config["spk_embed_dim"],
                  "whisper_mel_bins": 128, "prompt_max_seconds": 30,
                  # feat_extractor fmax: 8000 (CosyVoice2), null = Nyquist (CosyVoice3)
                  "prompt_mel_fmax": config["feat_extractor"]["fmax"] or config["sample_rate"] / 2},
        "tokens": {"token_rate": config["token_frame_rate"],
                   "token_mel_ratio": config["token_mel_ratio"]},
        "vocab": {"text_vocab_size": c.vocab_size,
                  "speech_token_size": config["llm"]["speech_token_size"],
                  "speech_embedding_rows": llm.speech_embedding.num_embeddings,
                  "llm_embedding_rows": 0 if v3 else llm.llm_embedding.num_embeddings,
                  "head_outputs": llm.llm_decoder.out_features},
        "special_ids": {"sos": llm.sos, "task_id": llm.task_id, "eos": llm.eos_token,
                        "stop_tokens": list(llm.stop_token_ids), "endofprompt": 151646,
                        # CosyVoice3Model.silent_tokens (cli/model.py:423), dropped past a run of 5
                        **({"silent_tokens": SILENT_TOKENS} if v3 else {})},
        "llm": {"hidden_size": c.hidden_size, "num_layers": c.num_hidden_layers,
                "num_attention_heads": c.num_attention_heads,
                "num_kv_heads": c.num_key_value_heads, "head_dim": c.head_dim,
                "rope_theta": c.rope_theta},
        "sampling": {"top_p": sampling["top_p"], "top_k": sampling["top_k"],
                     "win_size": sampling["win_size"], "tau_r": sampling["tau_r"],
                     "min_token_text_ratio": 2, "max_token_text_ratio": 20},
        "flow": {"n_timesteps": 10, "inference_cfg_rate":
                 float(flow_cfg["decoder"]["cfm_params"]["content"]["inference_cfg_rate"]),
                 "t_scheduler": "cosine", "pre_lookahead_len": flow_cfg["pre_lookahead_len"],
                 # CosyVoice3's flow has no encoder; its DiT chunks by the yaml's chunk_size
                 "static_chunk_size": config["chunk_size"] if v3 else
                 flow_cfg["encoder"]["static_chunk_size"]},
        "streaming": {"token_hop_len": 25, "token_max_hop_len": 100, "stream_scale_factor": 2,
                      "mel_cache_len": 8, "source_cache_len": 3840},
        "hift": {"n_fft": hift_cfg["istft_params"]["n_fft"],
                 "hop_len": hift_cfg["istft_params"]["hop_len"],
                 "nb_harmonics": hift_cfg["nb_harmonics"], "upsample_scale": 480,
                 "sine_amp": hift_cfg["nsf_alpha"], "noise_std": hift_cfg["nsf_sigma"],
                 "voiced_threshold": hift_cfg["nsf_voiced_threshold"],
                 "audio_limit": hift_cfg["audio_limit"],
                 **({"conv_pre_look_right": hift_cfg["conv_pre_look_right"]} if v3 else {})},
        "graphs": g, "tensors": t,
        "tokenizer": {"dir": "tokenizer", "files": files},
    }
    exported = time.time()
    if not args.no_goldens:
        if v3:
            goldens.write_cosyvoice3(out, llm, flow, hift, campplus, tokenizer,
                                     doc["audio"]["prompt_mel_fmax"], args.seed)
        else:
            goldens.write(out, llm, flow, hift, campplus, tokenizer, args.seed)
        doc["goldens"] = {"index": "goldens/index.json"}
    manifest.write(out, doc)
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(out) for f in fs)
    print(f"bundle {out}: {size / 1e6:.1f} MB, graphs+tensors {exported - started:.1f} s, "
          f"goldens {time.time() - exported:.1f} s")
    if args.fp16:
        dst = out.rstrip("/") + "-fp16"
        if os.path.exists(dst):
            shutil.rmtree(dst)
        fp16.convert_bundle(out, dst)


if __name__ == "__main__":
    main()
