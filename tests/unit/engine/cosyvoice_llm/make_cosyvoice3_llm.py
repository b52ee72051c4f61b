#!/usr/bin/python3
"""CosyVoice3's LLM for the decoder's oracle test: upstream's CosyVoice3LM, built from upstream's
cosyvoice3.yaml at the tiny bundle's sizes with random weights (seeded), its step graph
(tools/cosyvoice_export/llm_step_graph.py, the head without bias), its embedding tables, and
upstream's own prefill, decode step and greedy decode loop on them as goldens (goldens.py's
llm.prefill / llm.decode / llm.greedy stages). One folder, not a bundle: CosyVoice3's flow (DiT)
and causal HiFT are not exported yet. Without VOXSERVE_COSYVOICE_REF it writes nothing (the test
skips).

  make_cosyvoice3_llm.py --out DIR"""
import argparse
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "tools", "cosyvoice_export"))

ENDOFPROMPT = 151646  # <|endofprompt|> (reference/model-interfaces.md 3.5)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    if not os.environ.get("VOXSERVE_COSYVOICE_REF"):
        print("VOXSERVE_COSYVOICE_REF is unset: no CosyVoice3 LLM written, its test skips")
        shutil.rmtree(args.out, ignore_errors=True)
        return
    import numpy as np
    import torch

    import goldens
    import llm_step_graph
    import tokenizer_files
    import upstream_modules

    ref = upstream_modules.import_upstream()
    yaml_path = os.path.join(ref, "examples", "libritts", "cosyvoice3", "conf", "cosyvoice3.yaml")
    _, llm, _, _ = upstream_modules.build(yaml_path, "tiny", 7, parts=("llm",))
    out = args.out
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "tensors"))
    qwen = llm.llm.model
    llm_step_graph.export(qwen, llm.llm_decoder, os.path.join(out, "llm_step.onnx"), "fp32", 8192)
    with torch.no_grad():
        np.save(os.path.join(out, "tensors", "embed_tokens.npy"),
                qwen.model.embed_tokens.weight.numpy())
        np.save(os.path.join(out, "tensors", "speech_embedding.npy"),
                llm.speech_embedding.weight.numpy())
        torch.manual_seed(8)
        w = goldens.Writer(out)
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
        w.finish({"family": "cosyvoice3", "sos": llm.sos, "task_id": llm.task_id,
                  "stop_tokens": list(llm.stop_token_ids), "texts": goldens.TEXTS})
    print(f"CosyVoice3 LLM written to {out}")


if __name__ == "__main__":
    main()
