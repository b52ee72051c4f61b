#!/usr/bin/python3
"""CTest fixture for unit_engine's CosyVoice text-frontend tests: runs upstream's own
text_normalize (cosyvoice/cli/frontend.py) and frontend_utils.py functions, imported from
$VOXSERVE_COSYVOICE_REF, on a list of texts, and writes what they return to cases.json.
split_paragraph measures English in tokens of the test vocabulary (the bpe_test_vocab
fixture's, with CosyVoice2's special tokens added), through the independent Python BPE in
tests/support/qwen2_bpe.py. Without the variable, cases.json says why and the tests skip.

Usage: make_frontend_cases.py --bpe-dir DIR --out DIR
"""

import argparse
import ast
import json
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "support"))
import qwen2_bpe  # noqa: E402

NORMALIZE_TEXTS = [
    # en: numbers, punctuation, splitting by tokens
    "Hello world.",
    "  I have 3 apples and 12 oranges, costing 1001 dollars in 2024!  ",
    "The year 1984 had 365 days; 0 leap seconds? 007 is a spy: 1000000 fans.",
    "Numbers: 100, 101, 110, 999, 1100, 12345, 100000, 1000001, 1234567890.",
    "He said \"stop.\" Then he left. She said \"go!\" and ran.",
    "No final punctuation here",
    "Wait... what?! Really?? Yes.",
    "Unicode digits ３ and ٣ and superscript ² here.",
    "A 36 digit number 123456789012345678901234567890123456 here.",
    "Tabs\tand\nnewlines\nstay in English text.",
    "[breath] Hello there [laughter] friend.",
    "<|endofprompt|>Keep this as it is, 42 times.",
    "Only <| one marker here, 5 times.",
    ("This is a long English paragraph that goes on and on so that the splitter has to cut it "
     "into several pieces. It talks about speech synthesis, streaming audio, and tokenizers. "
     "Each sentence adds a few more tokens to the count. The splitter keeps sentences whole and "
     "closes a piece once it holds more than sixty tokens and the next sentence would push it "
     "past eighty. Short tail."),
    "One. Two. Three. Four. Five. Six. Seven. Eight. Nine. Ten. Eleven. Twelve. Thirteen.",
    "...",
    "!?",
    # zh: blanks, corner marks, brackets, punctuation rules
    "今天天气很好，我们去公园散步吧。",
    "你好 世界 hello world 再见",
    "面积是 100m² 体积是 3m³。",
    "（注意）这是【重要】的`代码`——请看。",
    "他说：“明天见！”然后就走了。",
    "第一句.第二句.第三句",
    "选项 - 第一个 - 第二个",
    "我们要去，",
    "结尾有很多逗号，，,、",
    "换行\n也会\n被去掉",
    "我有3个苹果和12个橘子，一共1001元。",
    ("这是一个很长的中文段落，用来测试按字数切分的逻辑。第一句话讲的是语音合成。第二句话讲的是"
     "流式输出，服务器一句一句地把声音发给客户端。第三句话讲的是分词器，它把文字切成词元。第四句"
     "话讲的是文本规范化，数字和符号都要处理。第五句话比较短。第六句。第七句话用来凑长度，"
     "让切分器必须切成好几段才行！最后一句？"),
    "混合 English 和中文 text，还有 123 数字.",
    "“引号”开头。",
    "。。。",
    "\u3000全角空格\u3000",
]

# Texts where upstream raises instead of returning; what the C++ frontend does instead is
# checked by name in the C++ test.
RAISING_TEXTS = ["   ", '."', "\n", "A 37 digit number 1234567890123456789012345678901234567."]

NUMBERS = (
    [str(i) for i in range(0, 1201)]
    + ["2024", "10000", "10001", "10010", "10100", "11000", "100000", "100001", "101000",
       "110000", "999999", "1000000", "1000001", "1001000", "1000100", "1010101", "1100000",
       "1234567", "9999999", "10000000", "123456789", "1000000000", "1234567890", "00", "000",
       "0001", "0010", "0100", "00012345", "1" + "0" * 35, "9" * 36, "1" + "0" * 33 + "1",
       "٣٤", "３２", "²", "1²", "²3"]
)

# Random mixes of what the rules look at (seeded: the same list every run).
ATOMS = [" ", "  ", "\n", ".", "。", "?", "！", "\"", "”", "，", ",", "、", " - ", "——", "（",
         "】", "`", "²", "³", "7", "0", "42", "1001", "１", "٣", "a", "Hello", "world", "中", "文",
         "<|", "|>", "[breath]", "\t", "\u3000", "😀", "e\u0301", "it's"]


def random_texts(count):
    import random
    rng = random.Random(20261201)
    return ["".join(rng.choice(ATOMS) for _ in range(rng.randrange(1, 40))) for _ in range(count)]


SPLIT_TEXTS = [
    ("en", "A. B. C."),
    ("en", "No punctuation at all"),
    ("en", 'He said "hi." She said "bye!" Done.'),
    ("en", 'Hi.."Odd" end.'),
    ("en", "x" * 10 + ". " + "y " * 100 + "end."),
    ("zh", "一。二？三！四；五：六、七.八?九!十;"),
    ("zh", "很长的句子" * 30 + "。短。"),
    ("zh", "他说：“好。”她说“不”。"),
]


def load_upstream(ref):
    sys.path.insert(0, ref)
    # frontend.py imports onnxruntime, whisper and torch/torchaudio for the speech side only;
    # stand-ins keep text_normalize importable (and the fixture fast) without them.
    for name in ["onnxruntime", "whisper", "torch", "torchaudio", "torchaudio.compliance",
                 "torchaudio.compliance.kaldi"]:
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["torchaudio"].compliance = sys.modules["torchaudio.compliance"]
    sys.modules["torchaudio.compliance"].kaldi = sys.modules["torchaudio.compliance.kaldi"]
    from cosyvoice.cli import frontend  # noqa: E402
    from cosyvoice.utils import frontend_utils  # noqa: E402
    return frontend, frontend_utils


def upstream_special_tokens(ref):
    """additional_special_tokens of CosyVoice2Tokenizer / CosyVoice3Tokenizer, read from
    tokenizer.py's source (importing it needs transformers, tiktoken and whisper)."""
    path = os.path.join(ref, "cosyvoice", "tokenizer", "tokenizer.py")
    tree = ast.parse(open(path, encoding="utf-8").read())
    lists = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name in ("CosyVoice2Tokenizer",
                                                            "CosyVoice3Tokenizer"):
            for sub in ast.walk(node):
                if isinstance(sub, ast.Assign) and getattr(sub.targets[0], "id", "") == "special_tokens":
                    value = ast.literal_eval(sub.value)
                    lists[node.name] = ([value["eos_token"], value["pad_token"]]
                                        + value["additional_special_tokens"])
    return lists


def add_special_tokens(added, tokens, next_id):
    """HF add_special_tokens: known tokens keep their ids, new ones take the next id."""
    added = dict(added)
    for token in tokens:
        if token not in added:
            added[token] = next_id
            next_id += 1
    return added


class Tokenize:
    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    def encode(self, text, **kwargs):
        return self.tokenizer.encode(text)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bpe-dir", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    out_path = os.path.join(args.out, "cases.json")
    ref = os.environ.get("VOXSERVE_COSYVOICE_REF", "")
    if not ref:
        with open(out_path, "w", encoding="utf-8") as f:
            json.dump({"skipped": "VOXSERVE_COSYVOICE_REF is unset: set it to an upstream "
                                  "CosyVoice checkout to compare the text frontend with it"}, f)
        return
    frontend, utils = load_upstream(os.path.abspath(ref))
    specials = upstream_special_tokens(os.path.abspath(ref))

    vocab = json.load(open(os.path.join(args.bpe_dir, "vocab.json"), encoding="utf-8"))
    merges = [tuple(line.split()) for line in
              open(os.path.join(args.bpe_dir, "merges.txt"), encoding="utf-8").read().splitlines()[1:]
              if line.strip()]
    config = json.load(open(os.path.join(args.bpe_dir, "tokenizer_config.json"), encoding="utf-8"))
    base = {v["content"]: int(k) for k, v in config["added_tokens_decoder"].items()}
    next_id = max(list(vocab.values()) + list(base.values())) + 1
    added = add_special_tokens(base, specials["CosyVoice2Tokenizer"], next_id)
    tokenizer = Tokenize(qwen2_bpe.Tokenizer(vocab, merges, added))

    fe = frontend.CosyVoiceFrontEnd.__new__(frontend.CosyVoiceFrontEnd)
    fe.tokenizer = tokenizer
    fe.text_frontend = ""  # neither ttsfrd nor wetext, as here
    fe.inflect_parser = frontend.inflect.engine()
    fe.allowed_special = "all"

    result = {"normalize": [], "raising": [], "numbers": [], "split": [], "rules": [],
              "special_tokens": {}}
    for text in NORMALIZE_TEXTS:
        result["normalize"].append({"text": text, "pieces": fe.text_normalize(text, split=True),
                                    "whole": fe.text_normalize(text, split=False)})
    result["random"] = []
    for text in random_texts(400):
        try:
            result["random"].append({"text": text,
                                     "pieces": fe.text_normalize(text, split=True),
                                     "whole": fe.text_normalize(text, split=False)})
        except Exception as error:  # noqa: BLE001 - one of the documented differences
            result["random_raising"] = result.get("random_raising", 0) + 1
    for text in RAISING_TEXTS:
        try:
            fe.text_normalize(text, split=True)
        except Exception as error:  # noqa: BLE001 - recording what upstream raises
            result["raising"].append({"text": text, "error": type(error).__name__})
    for digits in NUMBERS:
        try:
            words = fe.inflect_parser.number_to_words(digits)
        except Exception as error:  # noqa: BLE001
            words = None
            result.setdefault("numbers_raising", []).append(
                {"digits": digits, "error": type(error).__name__})
        if words is not None:
            result["numbers"].append({"digits": digits, "words": words})
    for lang, text in SPLIT_TEXTS:
        result["split"].append({"lang": lang, "text": text, "pieces": utils.split_paragraph(
            text, tokenizer.encode, lang, token_max_n=80, token_min_n=60, merge_len=20)})
    for text in ["a b", "中 文", "中 a", "a 中", "a  b", " x", "x ", "x²y³", "（a）【b】`c`——d",
                 "。，！", "", "a。", "¥$+", "\n", "“”", "《》"]:
        result["rules"].append({
            "text": text, "contains_chinese": utils.contains_chinese(text),
            "replace_blank": utils.replace_blank(text) if text.strip() == text else None,
            "replace_corner_mark": utils.replace_corner_mark(text),
            "remove_bracket": utils.remove_bracket(text),
            "is_only_punctuation": utils.is_only_punctuation(text)})
    for name, tokens in specials.items():
        # Ids on Qwen2's real layout: 151643 BPE tokens, then its three specials.
        qwen = add_special_tokens({"<|endoftext|>": 151643, "<|im_start|>": 151644,
                                   "<|im_end|>": 151645}, tokens, 151646)
        result["special_tokens"][name] = {"list": tokens,
                                          "ids": [[t, qwen[t]] for t in dict.fromkeys(tokens)]}
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(result, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
