"""An independent, deliberately plain Qwen2 byte-level BPE in Python: the oracle the C++
tokenizer (src/text/bpe_tokenizer.*) is checked against, and a tiny BPE trainer that makes the
test vocabulary (vocab.json + merges.txt + tokenizer_config.json) so no real model is needed.

It follows the rules of Hugging Face's Qwen2Tokenizer (slow, tokenization_qwen2.py) as written
from their description, not from their code: added tokens split out first (leftmost, longest),
NFC on the rest, the pre-tokenizer regex below (python3-regex), GPT-2's byte->unicode map, and
the classic BPE loop (merge the lowest-ranked adjacent pair everywhere, repeat). No BOS/EOS.
"""

import collections
import json
import os
import unicodedata

import regex

# Qwen2's pre-tokenizer (HF tokenization_qwen2.py PRETOKENIZE_REGEX; digits one by one).
PRETOKENIZE = regex.compile(
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

# The specials Qwen2's tokenizer_config.json declares after the BPE vocabulary.
BASE_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def bytes_to_unicode():
    """GPT-2's map: printable Latin-1 bytes stand for themselves, the other 68 bytes get
    code points from U+0100 on, in byte order."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    table = {}
    extra = 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


BYTE_TO_CHAR = bytes_to_unicode()
CHAR_TO_BYTE = {c: b for b, c in BYTE_TO_CHAR.items()}


def to_symbols(piece):
    return [BYTE_TO_CHAR[b] for b in piece.encode("utf-8")]


def pretokenize(text):
    return PRETOKENIZE.findall(text)


def train(corpus, num_merges):
    """Plain BPE training over pre-tokenized words: returns (vocab, merges); vocab holds the
    256 byte symbols (in the map's code point order, so ids are not byte values) then one token
    per merge, merges are pairs of symbol strings in rank order."""
    words = collections.Counter()
    for line in corpus:
        for piece in pretokenize(unicodedata.normalize("NFC", line)):
            words[tuple(to_symbols(piece))] += 1
    vocab = {}
    for c in sorted(BYTE_TO_CHAR.values()):
        vocab[c] = len(vocab)
    merges = []
    for _ in range(num_merges):
        pairs = collections.Counter()
        for word, count in words.items():
            for a, b in zip(word, word[1:]):
                pairs[(a, b)] += count
        if not pairs:
            break
        # Most frequent, ties broken by the pair itself so the result is reproducible.
        best = min(pairs, key=lambda p: (-pairs[p], p))
        merges.append(best)
        vocab[best[0] + best[1]] = len(vocab)
        merged = collections.Counter()
        for word, count in words.items():
            merged[merge_pair(list(word), best)] += count
        words = merged
    return vocab, merges


def merge_pair(symbols, pair):
    out = []
    i = 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            out.append(pair[0] + pair[1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return tuple(out)


class Tokenizer:
    """Encode/decode with a vocab, merges and added tokens (content -> id)."""

    def __init__(self, vocab, merges, added):
        self.vocab = vocab
        self.ranks = {tuple(m): i for i, m in enumerate(merges)}
        self.added = dict(added)
        self.id_to_token = {i: t for t, i in vocab.items()}
        self.added_by_id = {i: t for t, i in self.added.items()}

    def bpe(self, piece):
        symbols = tuple(to_symbols(piece))
        while len(symbols) > 1:
            pairs = set(zip(symbols, symbols[1:]))
            best = min(pairs, key=lambda p: self.ranks.get(p, float("inf")))
            if best not in self.ranks:
                break
            symbols = merge_pair(list(symbols), best)
        return [self.vocab[s] for s in symbols]

    def split_added(self, text):
        """[(is_added, text)]: at each position the longest added token starting there."""
        out = []
        plain_start = 0
        i = 0
        by_length = sorted(self.added, key=len, reverse=True)
        while i < len(text):
            match = next((t for t in by_length if text.startswith(t, i)), None)
            if match is None:
                i += 1
                continue
            if plain_start < i:
                out.append((False, text[plain_start:i]))
            out.append((True, match))
            i += len(match)
            plain_start = i
        if plain_start < len(text):
            out.append((False, text[plain_start:]))
        return out

    def encode(self, text):
        ids = []
        for is_added, part in self.split_added(text):
            if is_added:
                ids.append(self.added[part])
                continue
            for piece in pretokenize(unicodedata.normalize("NFC", part)):
                ids.extend(self.bpe(piece))
        return ids

    def decode(self, ids, skip_special_tokens=False):
        out = bytearray()
        for i in ids:
            if i in self.added_by_id:
                if not skip_special_tokens:
                    out.extend(self.added_by_id[i].encode("utf-8"))
            else:
                out.extend(CHAR_TO_BYTE[c] for c in self.id_to_token[i])
        return out.decode("utf-8", errors="replace")


def write_tokenizer_dir(out_dir, vocab, merges):
    """vocab.json, merges.txt and tokenizer_config.json laid out as Qwen2's are."""
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(out_dir, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")
        for a, b in merges:
            f.write(f"{a} {b}\n")
    decoder = {}
    for offset, token in enumerate(BASE_SPECIALS):
        decoder[str(len(vocab) + offset)] = {
            "content": token, "lstrip": False, "normalized": False, "rstrip": False,
            "single_word": False, "special": True}
    config = {"add_prefix_space": False, "added_tokens_decoder": decoder,
              "bos_token": None, "eos_token": "<|endoftext|>", "model_max_length": 32768,
              "tokenizer_class": "Qwen2Tokenizer", "unk_token": None}
    with open(os.path.join(out_dir, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, ensure_ascii=False, indent=1)
    return {t: len(vocab) + i for i, t in enumerate(BASE_SPECIALS)}
