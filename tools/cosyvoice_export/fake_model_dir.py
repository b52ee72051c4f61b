"""A fake CosyVoice2 or Fun-CosyVoice3 model directory for testing `export.py --model-dir` where no
weights can be downloaded: upstream's yaml with tiny widths, random llm.pt/flow.pt/hift.pt
(hift.pt with the "generator." key prefix some snapshots have), the prompt stand-ins and the
estimator exported as upstream's files, a Qwen2 config.json and byte-level tokenizer files in
CosyVoice-BlankEN/.

  fake_model_dir.py OUT_DIR [--family cosyvoice2|cosyvoice3]
"""
import json
import os
import shutil
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graphs  # noqa: E402
import prompt_standins  # noqa: E402
import tokenizer_files  # noqa: E402
import upstream_modules as m  # noqa: E402
ref = m.import_upstream()
out = sys.argv[1]
family = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--family" else "cosyvoice2"
shutil.rmtree(out, ignore_errors=True); os.makedirs(out + '/CosyVoice-BlankEN')
text = open(f'{ref}/examples/libritts/{family}/conf/{family}.yaml').read()
TINY_WIDTHS = {
    "cosyvoice2": [
        ("channels: [256]", "channels: [32]"), ("attention_head_dim: 64", "attention_head_dim: 16"),
        ("n_blocks: 4", "n_blocks: 1"), ("num_mid_blocks: 12", "num_mid_blocks: 1"),
        ("num_heads: 8", "num_heads: 2"), ("base_channels: 512", "base_channels: 32"),
        ("cond_channels: 512", "cond_channels: 32"), ("attention_heads: 8", "attention_heads: 2"),
        ("linear_units: 2048", "linear_units: 64"), ("num_blocks: 6", "num_blocks: 1")],
    # The DiT as upstream_modules.TINY_COSYVOICE3 shrinks it (rotary still on the first head).
    "cosyvoice3": [
        ("channels: 1024", "channels: 64"), ("dim: 1024", "dim: 64"), ("depth: 22", "depth: 2"),
        ("heads: 16", "heads: 4"), ("dim_head: 64", "dim_head: 16"),
        ("base_channels: 512", "base_channels: 32"), ("cond_channels: 512", "cond_channels: 32")],
}
for a, b in TINY_WIDTHS[family]:
    assert a in text, a
    text = text.replace(a, b)
open(f'{out}/{family}.yaml', 'w').write(text)
qwen = dict(m.TINY['qwen2'])
json.dump(qwen, open(out + '/CosyVoice-BlankEN/config.json', 'w'))
tokenizer_files.write(out + '/CosyVoice-BlankEN')
cfg, llm, flow, hift = m.build(f'{out}/{family}.yaml', 'real', 7, qwen)
torch.save(llm.state_dict(), out + '/llm.pt'); torch.save(flow.state_dict(), out + '/flow.pt')
torch.save({'generator.' + k: v for k, v in hift.state_dict().items()}, out + '/hift.pt')
prompt_standins.export_campplus(prompt_standins.CampplusStandin(), out + '/campplus.onnx')
tokenizer_name = 'speech_tokenizer_v3.onnx' if family == 'cosyvoice3' else 'speech_tokenizer_v2.onnx'
prompt_standins.export_speech_tokenizer(prompt_standins.SpeechTokenizerStandin(),
                                        f'{out}/{tokenizer_name}')
graphs.export_estimator(flow.decoder.estimator, out + '/flow.decoder.estimator.fp32.onnx')
print('fake model dir', out)
