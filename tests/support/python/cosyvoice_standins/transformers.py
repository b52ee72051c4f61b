"""Stand-in for `transformers.AutoTokenizer`, as cosyvoice/tokenizer/tokenizer.py:259-266 uses it
(from_pretrained, add_special_tokens, __call__([text], return_tensors="pt"), batch_decode), so
that upstream's CosyVoice2Tokenizer runs as is. transformers is not packaged for Debian 12.
The BPE itself is tests/support/qwen2_bpe.py (our independent Qwen2Tokenizer rules: added tokens
split out first, NFC, Qwen2's pre-tokenizer regex, byte-level merges; no BOS/EOS added).
add_special_tokens follows Hugging Face's rule: a token already known keeps its id, a new one
gets the next id after every id in use (len(tokenizer) for Qwen2's contiguous vocabulary).
Written by us; not Hugging Face code."""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
import qwen2_bpe  # noqa: E402  (tests/support/qwen2_bpe.py)


class _Qwen2TokenizerStandin:
    def __init__(self, path):
        with open(os.path.join(path, "vocab.json"), encoding="utf-8") as f:
            vocab = json.load(f)
        with open(os.path.join(path, "merges.txt"), encoding="utf-8") as f:
            merges = [tuple(line.split()) for line in f
                      if line.strip() and not line.startswith("#version")]
        with open(os.path.join(path, "tokenizer_config.json"), encoding="utf-8") as f:
            config = json.load(f)
        added = {entry["content"]: int(i)
                 for i, entry in config.get("added_tokens_decoder", {}).items()}
        self._bpe = qwen2_bpe.Tokenizer(vocab, merges, added)

    def add_special_tokens(self, special_tokens):
        tokens = [v for k, v in special_tokens.items() if k != "additional_special_tokens"]
        tokens += special_tokens.get("additional_special_tokens", [])
        added = 0
        for token in tokens:
            if token in self._bpe.added or token in self._bpe.vocab:
                continue
            new_id = max([*self._bpe.vocab.values(), *self._bpe.added.values()]) + 1
            self._bpe.added[token] = new_id
            self._bpe.added_by_id[new_id] = token
            added += 1
        return added

    def __call__(self, texts, return_tensors=None):
        ids = [self._bpe.encode(t) for t in texts]
        if return_tensors == "pt":
            return {"input_ids": torch.tensor(ids, dtype=torch.int64)}
        return {"input_ids": ids}

    def batch_decode(self, sequences, skip_special_tokens=False):
        return [self._bpe.decode([int(i) for i in s], skip_special_tokens) for s in sequences]


class AutoTokenizer:
    @staticmethod
    def from_pretrained(path, **kwargs):
        return _Qwen2TokenizerStandin(path)
