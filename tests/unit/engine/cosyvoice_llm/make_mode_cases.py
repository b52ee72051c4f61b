#!/usr/bin/python3
"""CTest fixture for unit_engine_cosyvoice_llm's mode tests (llm_prompt_modes_test.cc): runs
upstream's own frontend_zero_shot, frontend_cross_lingual and frontend_instruct2
(cosyvoice/cli/frontend.py:168-213, imported unmodified from $VOXSERVE_COSYVOICE_REF) and
writes, per mode, what each leaves for the LLM (prompt_text, llm_prompt_speech_token) and for
the flow (flow_prompt_speech_token, prompt_speech_feat, flow_embedding) to mode_cases.json.

Written by us: the feature extractors are replaced by a subclass that returns crafted tensors
(the modes differ in which of them reach the LLM, not in how they are computed; the extractors
themselves are checked by test_onnx_cosyvoice_frontend_oracle.py), and the tokenizer by a table
from text to crafted ids. The C++ test gives PromptForMode the same crafted ids and compares.
Without the variable, mode_cases.json says why and the test skips.

Usage: make_mode_cases.py --out DIR
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SUPPORT = os.path.join(HERE, "..", "..", "..", "support", "python")
STANDINS = os.path.join(SUPPORT, "cosyvoice_standins")

TRANSCRIPT = "This is the prompt recording."
INSTRUCTIONS = "Speak cheerfully."
INSTRUCT = INSTRUCTIONS + "<|endofprompt|>"  # instruct_text as upstream's callers write it
TTS_TEXT = "Hello there."
# Crafted token ids per text (the tokenizer's role), distinct so that a mix-up shows.
TEXT_IDS = {TRANSCRIPT: [11, 12, 13, 14], INSTRUCT: [21, 22, 23, 151646], TTS_TEXT: [31, 32, 33],
            "": []}  # cross-lingual tokenizes an empty prompt text (frontend.py:192)
PROMPT_SPEECH_TOKENS = [101, 102, 103, 104, 105]  # 5 tokens -> 10 mel frames (frontend.py:176)
SPEAKER_EMBEDDING = [0.5, -0.25, 0.125]


def oracle_path():
    path = os.environ.get("VOXSERVE_COSYVOICE_REF")
    if not path:
        return None
    root = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
    for candidate in ([path] if os.path.isabs(path) else [path, os.path.join(root, path)]):
        if os.path.isfile(os.path.join(candidate, "cosyvoice", "cli", "frontend.py")):
            return os.path.abspath(candidate)
    raise RuntimeError(f"VOXSERVE_COSYVOICE_REF={path}: no cosyvoice/cli/frontend.py there")


def ints(tensor):
    return [int(v) for v in tensor.reshape(-1).tolist()]


def run_modes(ref):
    # Stand-ins shadow absent packages only (onnxruntime, whisper, librosa): frontend.py imports
    # them at the top.
    for path in (ref, SUPPORT, STANDINS):
        if path not in sys.path:
            sys.path.insert(0, os.path.abspath(path))
    import torch
    from cosyvoice.cli.frontend import CosyVoiceFrontEnd

    class CraftedFrontEnd(CosyVoiceFrontEnd):
        """Upstream's mode functions over crafted features (no graphs, no tokenizer files)."""

        def __init__(self):  # noqa: D401 (upstream's __init__ loads models we do not need)
            pass

        def _extract_text_token(self, text):
            ids = torch.tensor([TEXT_IDS[text]], dtype=torch.int32)
            return ids, torch.tensor([ids.shape[1]], dtype=torch.int32)

        def _extract_speech_token(self, prompt_wav):
            ids = torch.tensor([PROMPT_SPEECH_TOKENS], dtype=torch.int32)
            return ids, torch.tensor([ids.shape[1]], dtype=torch.int32)

        def _extract_speech_feat(self, prompt_wav):
            frames = 2 * len(PROMPT_SPEECH_TOKENS)
            feat = torch.arange(frames * 80, dtype=torch.float32).reshape(1, frames, 80)
            return feat, torch.tensor([frames], dtype=torch.int32)

        def _extract_spk_embedding(self, prompt_wav):
            return torch.tensor([SPEAKER_EMBEDDING])

    frontend = CraftedFrontEnd()
    wav, rate = "prompt.wav", 24000  # CosyVoice2's rate: the 2-frames-per-token alignment
    inputs = {
        "zero_shot": frontend.frontend_zero_shot(TTS_TEXT, TRANSCRIPT, wav, rate, ""),
        "cross_lingual": frontend.frontend_cross_lingual(TTS_TEXT, wav, rate, ""),
        "instruct": frontend.frontend_instruct2(TTS_TEXT, INSTRUCT, wav, rate, ""),
    }
    modes = {}
    for mode, model_input in inputs.items():
        # A key upstream deleted is the empty default of CosyVoice2Model.tts (model.py:328-330).
        modes[mode] = {
            "text": ints(model_input["text"]),
            "llm_prompt_text": ints(model_input["prompt_text"]) if "prompt_text" in model_input
            else [],
            "llm_prompt_speech_tokens": ints(model_input["llm_prompt_speech_token"])
            if "llm_prompt_speech_token" in model_input else [],
            "flow_prompt_speech_tokens": ints(model_input["flow_prompt_speech_token"]),
            "prompt_mel_frames": int(model_input["prompt_speech_feat"].shape[1]),
            "flow_embedding": [float(v) for v in model_input["flow_embedding"].reshape(-1)],
        }
    return modes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    ref = oracle_path()
    if ref is None:
        cases = {"skipped": "VOXSERVE_COSYVOICE_REF is unset: no upstream frontend to run"}
    else:
        cases = {"instructions": INSTRUCTIONS, "instruct_text": INSTRUCT,
                 "transcript_tokens": TEXT_IDS[TRANSCRIPT], "instruction_ids": TEXT_IDS[INSTRUCT],
                 "text_ids": TEXT_IDS[TTS_TEXT], "prompt_speech_tokens": PROMPT_SPEECH_TOKENS,
                 "speaker_embedding": SPEAKER_EMBEDDING, "modes": run_modes(ref)}
    with open(os.path.join(args.out, "mode_cases.json"), "w") as f:
        json.dump(cases, f, indent=1)


if __name__ == "__main__":
    main()
