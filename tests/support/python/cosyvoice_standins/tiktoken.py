"""Stand-in for tiktoken: cosyvoice/tokenizer/tokenizer.py imports it at the top for CosyVoice 1's
tokenizer only. Any use is an error."""


def __getattr__(name):
    raise NotImplementedError(f"tiktoken stand-in: tiktoken.{name} is not available in the "
                              "oracle tests (CosyVoice 1's tokenizer is not exercised)")
