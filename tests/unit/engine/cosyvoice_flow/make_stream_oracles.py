#!/usr/bin/python3
"""Oracle for the streaming flow + HiFT (CTest fixture cosyvoice_flow_stream_oracles):
upstream's own CosyVoice2Model.token2wav (cosyvoice/cli/model.py:292-325), called hop by hop as
CosyVoice2Model.tts schedules it (model.py:343-375), on the tiny bundle's flow and HiFT modules
(the export tool's builder, its default seed 0) and the token sequence, prompt and x-vector of the
bundle's flow.stream goldens. The estimator runs with streaming=False, as upstream's ONNX/TensorRT
estimator does (reference/model-interfaces.md 3.5). The noise SineGen2 draws in each call is
recorded so the C++ test can inject it.

  make_stream_oracles.py BUNDLE OUT

Writes OUT/tokens, prompt_tokens, prompt_mel, embedding, offsets (each call's token_offset and
token count, the last one finalize), noise and audio_<i> (each call's audio) as .npy. Without
VOXSERVE_COSYVOICE_REF, or without the bundle, it says so and writes nothing (the test skips)."""
import json
import os
import shutil
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "tools", "cosyvoice_export"))


def main():
    bundle, out = sys.argv[1], sys.argv[2]
    if os.path.isdir(out):
        shutil.rmtree(out)
    if not os.environ.get("VOXSERVE_COSYVOICE_REF"):
        print("VOXSERVE_COSYVOICE_REF is unset: no streaming-flow oracle written, its test skips")
        return 0
    index = os.path.join(bundle, "goldens", "index.json")
    if not os.path.exists(index):
        print(f"no tiny bundle goldens at {index}: no streaming-flow oracle written")
        return 0
    import numpy as np
    import torch
    import upstream_modules
    ref = upstream_modules.import_upstream()
    from cosyvoice.cli.model import CosyVoice2Model

    with open(index) as f:
        stages = {s["name"]: s for s in json.load(f)["stages"]}
    hops = [stages[f"flow.stream/{n}"] for n in range(len(stages)) if f"flow.stream/{n}" in stages]
    if not hops:
        sys.exit(f"{index}: no flow.stream/N goldens (re-export the bundle)")

    def golden(stage, key):
        return np.load(os.path.join(bundle, stage["inputs"][key]))

    final = hops[-1]
    tokens = torch.from_numpy(golden(final, "token")).to(torch.int32)
    prompt_tokens = torch.from_numpy(golden(final, "prompt_token")).to(torch.int32)
    prompt_mel = torch.from_numpy(golden(final, "prompt_mel"))
    embedding = torch.from_numpy(golden(final, "embedding"))
    schedule = [(int(golden(h, "token_offset")[0]), len(golden(h, "token"))) for h in hops]

    yaml_path = os.path.join(ref, "examples", "libritts", "cosyvoice2", "conf", "cosyvoice2.yaml")
    _, _, flow, hift = upstream_modules.build(yaml_path, "tiny", 0)  # export.py's default seed
    decoder_forward = flow.decoder.forward
    flow.decoder.forward = lambda *a, **k: decoder_forward(*a, **{**k, "streaming": False})

    captured = []
    randn_like = torch.randn_like

    def capture(x, *a, **k):  # SineGen2's draw (generator.py:310), as make_hift_oracles.py does
        r = randn_like(x, *a, **k)
        if x.shape[-1] == 9:
            captured.append(r[0].reshape(-1))
        return r

    # token2wav's own state, on a stand-in `self` (CosyVoice2Model.__init__, model.py:264-267).
    model = types.SimpleNamespace(flow=flow, hift=hift, hift_cache_dict={"u": None},
                                  mel_cache_len=8, source_cache_len=8 * 480,
                                  speech_window=np.hamming(2 * 8 * 480), fp16=False,
                                  device=torch.device("cpu"))
    os.makedirs(out)

    def save(name, tensor):
        array = tensor.detach().numpy() if isinstance(tensor, torch.Tensor) else tensor
        np.save(os.path.join(out, f"{name}.npy"), np.ascontiguousarray(array, dtype=np.float32))

    torch.randn_like = capture
    try:
        with torch.no_grad():
            for i, (offset, end) in enumerate(schedule):
                finalize = i == len(schedule) - 1
                # The final call is token2wav's default stream=False (model.py:364-369).
                audio = CosyVoice2Model.token2wav(
                    model, token=tokens[:end].unsqueeze(0), prompt_token=prompt_tokens.unsqueeze(0),
                    prompt_feat=prompt_mel.unsqueeze(0), embedding=embedding.unsqueeze(0),
                    token_offset=offset, uuid="u", stream=not finalize, finalize=finalize)
                save(f"audio_{i}", audio[0])
    finally:
        torch.randn_like = randn_like
    save("noise", torch.cat(captured))
    save("offsets", torch.tensor(schedule, dtype=torch.float32))
    save("tokens", tokens.to(torch.float32))
    save("prompt_tokens", prompt_tokens.to(torch.float32))
    save("prompt_mel", prompt_mel)
    save("embedding", embedding)
    print(f"streaming-flow oracle: {len(schedule)} token2wav calls written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
