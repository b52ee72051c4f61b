#!/usr/bin/python3
"""CTest fixture for unit_text's Qwen2Tokenizer tests: trains a small byte-level BPE on a mixed
English/Chinese corpus, writes it as a Qwen2 tokenizer directory (vocab.json, merges.txt,
tokenizer_config.json) and writes cases.json: texts with the ids, and decodings, that the
independent Python implementation in tests/support/qwen2_bpe.py gives for them.

Usage: make_bpe_cases.py --out DIR
"""

import argparse
import json
import os
import sys
import unicodedata

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
import qwen2_bpe  # noqa: E402

# Added after the three Qwen2 specials, in this order (the C++ test passes the same list).
# "[ab]" / "[ab][cd]" check the longest match; "[ià]" a token outside ASCII.
EXTRA_SPECIALS = ["<|endofprompt|>", "[breath]", "<strong>", "</strong>", "[laughter]",
                  "<laughter>", "</laughter>", "[ià]", "[ab]", "[ab][cd]"]

CORPUS = [
    "Hello world! This is a test of the tokenizer, and it's going to be fine.",
    "The quick brown fox jumps over the lazy dog. They'll say we're ready, I'm sure.",
    "Speech synthesis turns text into audio; the server streams it sentence by sentence.",
    "Numbers like 2024, 3.14 and 1,000,000 are read one digit at a time by the pre-tokenizer.",
    "In the beginning there was the word, and the word was spoken.",
    "今天天气很好，我们去公园散步吧。",
    "语音合成把文字变成声音，服务器一句一句地流式输出。",
    "你好，世界！这是一个测试。我们在测试中文和英文的混合文本。",
    "CosyVoice 是一个语音生成模型，支持中文、英文、日文和韩文。",
    "他说：“明天见！”然后就走了。",
    "混合文本 mixed text 也可以 tokenize 得很好。",
] * 3 + [
    # \v and NEL are \s to python3-regex and Oniguruma but not to ICU: merges across the
    # pieces they make ("\x0by", "\x85z") catch a pre-tokenizer that splits them otherwise.
    "x\x0b\x0by \x85\x85z",
] * 8


def cases():
    paragraph = (" ".join(CORPUS[:11]))
    return {
        "english": "Hello world! This is a test of the tokenizer.",
        "contractions": "I'm sure they'll say it's fine, WE'LL SEE. Don't; 'S 'd 'Re 've it'ſſ it'ﬅ it'ST",
        "chinese": "今天天气很好，我们去公园散步吧。",
        "chinese_unseen": "龘靐齉爩",
        "mixed": "CosyVoice2 支持中英文混合，比如 hello 世界。",
        "digits": "12345 and 3.14159, 1,000,000",
        "fullwidth_digits": "２０２４年 and ٣٤",
        "spaces": "a  b   c    d",
        "newlines": "line1\nline2\r\n\r\nline3\n\n\n",
        "leading_trailing": "   leading and trailing   ",
        "tabs": "\t\ttab\t x",
        "unicode_spaces": "a\u00a0b\u3000c\u2009d",
        "vt_nel": "a\x0bb\x85c \x0b\x0b d x\x0b\x0by \x85\x85z",
        "space_newline_runs": " \n \n  \n\t\n x \n",
        "emoji": "I \u2764\ufe0f \U0001F916 and \U0001F468\u200d\U0001F469\u200d\U0001F467!",
        "nfc_combining": "e\u0301cole, A\u030a, \u1100\u1161\u11a8",
        "hangul_devanagari": "한국어 नमस्ते",
        "punctuation": "Wait... what?!? (a) [b] {c} —— “quoted” 《书》",
        "controls": "\x00\x01\x7f\x1f end",
        "special_inside": "<|endofprompt|>Hello[breath]world",
        "chat_markers": "<|im_start|>user\nhi<|im_end|>",
        "special_zh": "[laughter]哈哈[laughter]<strong>强调</strong>",
        "special_longest": "[ab][cd] [ab][c [ab]",
        "special_partial": "[breath <|endofprompt| <laughter",
        "special_repeat": "<|endoftext|><|endoftext|>",
        "special_non_ascii": "[ià] and [ia]",
        "unknown_marker": "<|unknown|>",
        "empty": "",
        "one_letter_run": "a" * 1000,
        "emoji_run": "\U0001F600" * 50,
        "paragraph": paragraph,
    }


# Seeded random mixes of every character class the pre-tokenizer tells apart.
ATOMS = ["a", "Z", "the", " ", "  ", "\t", "\n", "\r\n", "\x0b", "\x85", "\u00a0", "\u3000",
         "\u2028", "7", "42", "٣", "２", "Ⅻ", ".", "...", "!?", "'", "'s", "'LL", "'d", "'ve", "-",
         "“", "”", "《", "中", "文字", "é", "e\u0301", "\u0301", "ß", "ſ", "İ", "Σ", "한", "न्", "😀",
         "\U0001F468\u200d\U0001F469", "\ufe0f", "\x00", "\x7f", "<|", "|>", "[ab]", "[ab][cd]",
         "[ab][c", "<|endofprompt|>", "[breath]", "[ià]", "[ia\u0300]", "$", "€", "#1"]


def random_texts(count):
    import random
    rng = random.Random(12345)
    return ["".join(rng.choice(ATOMS) for _ in range(rng.randrange(1, 30))) for _ in range(count)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    vocab, merges = qwen2_bpe.train(CORPUS, num_merges=400)
    added = qwen2_bpe.write_tokenizer_dir(args.out, vocab, merges)
    next_id = len(vocab) + len(added)
    for token in EXTRA_SPECIALS:
        added[token] = next_id
        next_id += 1
    tok = qwen2_bpe.Tokenizer(vocab, merges, added)
    out = {"extra_specials": EXTRA_SPECIALS, "vocab_size": next_id,
           "base_vocab_size": len(vocab), "encode": [], "decode": []}
    named = list(cases().items()) + [(f"random{i}", t) for i, t in enumerate(random_texts(500))]
    for name, text in named:
        ids = tok.encode(text)
        decoded = tok.decode(ids)
        # Round trip: decoding gives back the NFC form of the text, added tokens included.
        assert decoded == unicodedata.normalize("NFC", text), name
        out["encode"].append({"name": name, "text": text, "ids": ids, "decoded": decoded,
                              "decoded_skip_special": tok.decode(ids, skip_special_tokens=True)})
    # Ids that decode to broken UTF-8: lone lead/continuation bytes among whole characters.
    byte_id = {b: vocab[qwen2_bpe.BYTE_TO_CHAR[b]] for b in range(256)}
    for name, raw in {"lone_lead": [0xE4, 0x61], "truncated_3byte": [0xE4, 0xB8],
                      "lone_continuation": [0x80, 0x80, 0x62], "overlong": [0xC0, 0xAF],
                      "surrogate": [0xED, 0xA0, 0x80], "above_max": [0xF4, 0x90, 0x80, 0x80],
                      "good_then_bad": [0xE4, 0xB8, 0x96, 0xFF]}.items():
        ids = [byte_id[b] for b in raw]
        out["decode"].append({"name": name, "ids": ids, "text": tok.decode(ids)})
    with open(os.path.join(args.out, "cases.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
