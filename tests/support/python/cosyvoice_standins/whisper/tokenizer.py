"""Stand-in for `whisper.tokenizer.Tokenizer`: cosyvoice/tokenizer/tokenizer.py imports it at the
top for CosyVoice 1's tokenizer (get_tokenizer), which the CosyVoice2 frontend never calls. Using
it is an error, not a silent substitute."""


class Tokenizer:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("whisper.tokenizer stand-in: CosyVoice 1's tokenizer is not "
                                  "available in the oracle tests (only CosyVoice2's Qwen2 BPE)")
