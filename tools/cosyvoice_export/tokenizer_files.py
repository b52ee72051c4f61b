"""Tokenizer files for random-weight bundles. The real ones (CosyVoice-BlankEN: Qwen2's vocab.json,
merges.txt, tokenizer_config.json) cannot be downloaded here, so a random-weight bundle ships a
byte-level BPE in the same format with the 256 byte symbols only (no merges): every UTF-8 byte is
one token, which keeps the golden text ids computable without a BPE implementation. The special
tokens keep their real ids (cosyvoice/tokenizer/tokenizer.py: Qwen2's 151643-151645, then
CosyVoice2's additions from 151646 in list order), so the embedding table keeps its real height."""
import json
import os

QWEN2_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]  # 151643-151645
# cosyvoice/tokenizer/tokenizer.py, CosyVoice2Tokenizer additional_special_tokens, in order.
COSYVOICE2_SPECIALS = [
    "<|endofprompt|>", "[breath]", "<strong>", "</strong>", "[noise]", "[laughter]", "[cough]",
    "[clucking]", "[accent]", "[quick_breath]", "<laughter>", "</laughter>", "[hissing]", "[sigh]",
    "[vocalized-noise]", "[lipsmack]", "[mn]"]
FIRST_SPECIAL = 151643


def bytes_to_unicode():
    """GPT-2's reversible byte -> printable character map, which Qwen2's BPE uses."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def byte_vocab():
    return {ch: i for i, (b, ch) in enumerate(sorted(bytes_to_unicode().items()))}


def encode(text):
    """Token ids of `text` under the byte-only vocabulary (special tokens not recognised)."""
    table = bytes_to_unicode()
    vocab = byte_vocab()
    return [vocab[table[b]] for b in text.encode("utf-8")]


def write(directory):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(byte_vocab(), f, ensure_ascii=False)
    with open(os.path.join(directory, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")
    added = {str(FIRST_SPECIAL + i): {"content": t, "special": True}
             for i, t in enumerate(QWEN2_SPECIALS + COSYVOICE2_SPECIALS)}
    with open(os.path.join(directory, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump({"added_tokens_decoder": added, "model_max_length": 32768,
                   "tokenizer_class": "Qwen2Tokenizer", "errors": "replace"}, f, indent=1)
    return ["vocab.json", "merges.txt", "tokenizer_config.json"]
