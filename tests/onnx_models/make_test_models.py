#!/usr/bin/python3
"""Builds tiny ONNX graphs with exactly Piper's and Kokoro's interfaces, for voxserve's tests.

Run with Debian's /usr/bin/python3 (python3-onnx, python3-numpy). Nothing here is a real voice:
each graph computes a sine wave whose LENGTH follows the same rules as the real networks, so
tests can predict exactly how many samples a text must give:

Piper (rhasspy/piper export_onnx.py interface: input int64 [batch_size, phonemes],
input_lengths int64 [batch_size], scales float32 [3] = [noise, length, noise_w], sid int64 [1]
only with several speakers; output float32 [batch, 1, 1, samples]):
    frames(id)  = ceil(length_scale * (1 + id % 3))     for each of the item's ids
    samples     = (sum(frames) + sid) * HOP             (sid = 0 without speakers)
    audio[t]    = 0.5 * sin(2 pi (110 + 10 * n_ids) t / rate) for t < samples, else 0
  The "batch" variant also has piper1-gpl's alignment output (frames per id, float [B, 1, P]),
  so a server can cut each item of a padded batch to its length.

Kokoro (onnx-community / kokoro-onnx interface: input_ids (or tokens) int64 [1, T],
style float32 [1, 256], speed float32 [1] (or int32); output waveform float32 [samples]):
    frames(tok) = max(1, round((1 + tok % 2) / speed)) for the T-2 tokens between the pads
    samples     = sum(frames) * 600                    (600 samples = one 25 ms frame at 24 kHz)
    audio[t]    = style[0, 0] * sin(2 pi 220 t / 24000)
  The voice files hold, for voice v (0-based) and row r, style[r][0] = 0.1 * (v + 1) + 0.001 * r,
  so the audio's peak tells which voice and which style row (= token count) the server chose.
"""
import argparse
import json
import os
import zipfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HOP = 256
PIPER_RATE = 16000
KOKORO_RATE = 24000
OPSET = 15  # Piper's OPSET_VERSION

# Piper's default espeak phoneme → id map (piper-phonemize DEFAULT_PHONEME_ID_MAP): the id of
# each symbol is its position in this string.
PIPER_SYMBOLS = (
    "_^$ !'(),-.:;?abcdefhijklmnopqrstuvwxyz"
    "æçðøħŋœǀǁǂǃɐɑɒɓɔɕɖɗɘəɚɛɜɞɟɠɡɢɣɤɥɦɧɨɪɫɬɭɮɯɰɱɲɳɴɵɶɸɹɺɻɽɾʀʁʂʃʄʈʉʊʋʌʍʎʏʐʑʒʔʕʘʙʛʜʝʟʡʢʲˈˌːˑ˞βθχᵻⱱ"
    "0123456789\u0327\u0303\u032a\u032f\u0329ʰˤε↓#\"↑\u033a\u033bgʦX\u031d\u030a")
PIPER_ID_MAP = {symbol: [i] for i, symbol in enumerate(PIPER_SYMBOLS)}

# A Kokoro-style vocabulary (sparse ids, 0 is the pad and not in the map).
KOKORO_SYMBOLS = (';:,.!?—…"()“” ' + "abcdefhijklmnopqrstuvwxyz"
                  + "ɐɑɒɔəɚɛɜɪʊʌɹðθʃʒŋæɾʔᵻˈˌːAIOWYʤʧ")
KOKORO_VOCAB = {symbol: i + 1 for i, symbol in enumerate(KOKORO_SYMBOLS)}


def const(name, array):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(array, name))


def piper_graph(speakers, durations):
    nodes = [
        const("table", np.array([1 + i % 3 for i in range(256)], dtype=np.float32)),
        const("zero_i", np.array(0, dtype=np.int64)),
        const("one_i", np.array(1, dtype=np.int64)),
        const("zero_f", np.array(0.0, dtype=np.float32)),
        const("one_f", np.array(1.0, dtype=np.float32)),
        const("hop", np.array(float(HOP), dtype=np.float32)),
        const("two_pi_over_rate", np.array(2 * np.pi / PIPER_RATE, dtype=np.float32)),
        const("base_hz", np.array(110.0, dtype=np.float32)),
        const("step_hz", np.array(10.0, dtype=np.float32)),
        const("half", np.array(0.5, dtype=np.float32)),
        const("axes_0", np.array([0], dtype=np.int64)),
        const("axes_1", np.array([1], dtype=np.int64)),
        const("axes_12", np.array([1, 2], dtype=np.int64)),
        # mask[b, p] = p < input_lengths[b]
        helper.make_node("Shape", ["input"], ["in_shape"]),
        helper.make_node("Gather", ["in_shape", "one_i"], ["phonemes"], axis=0),
        helper.make_node("Range", ["zero_i", "phonemes", "one_i"], ["positions"]),
        helper.make_node("Unsqueeze", ["positions", "axes_0"], ["positions_row"]),
        helper.make_node("Unsqueeze", ["input_lengths", "axes_1"], ["lengths_col"]),
        helper.make_node("Less", ["positions_row", "lengths_col"], ["mask_b"]),
        helper.make_node("Cast", ["mask_b"], ["mask"], to=TensorProto.FLOAT),
        # frames = ceil(length_scale * table[id]) * mask
        helper.make_node("Gather", ["table", "input"], ["weights"], axis=0),
        helper.make_node("Gather", ["scales", "one_i"], ["length_scale"], axis=0),
        helper.make_node("Mul", ["weights", "length_scale"], ["scaled"]),
        helper.make_node("Ceil", ["scaled"], ["ceiled"]),
        helper.make_node("Mul", ["ceiled", "mask"], ["frames"]),
        helper.make_node("ReduceSum", ["frames", "axes_1"], ["frames_sum"], keepdims=0),
    ]
    total = "frames_sum"
    if speakers > 1:
        nodes += [helper.make_node("Cast", ["sid"], ["sid_f"], to=TensorProto.FLOAT),
                  helper.make_node("Add", ["frames_sum", "sid_f"], ["frames_total"])]
        total = "frames_total"
    nodes += [
        helper.make_node("Mul", [total, "hop"], ["samples"]),                  # [B]
        helper.make_node("ReduceMax", ["samples"], ["longest"], keepdims=0),   # scalar
        helper.make_node("Range", ["zero_f", "longest", "one_f"], ["t"]),      # [N]
        helper.make_node("Unsqueeze", ["t", "axes_0"], ["t_row"]),             # [1, N]
        helper.make_node("Unsqueeze", ["samples", "axes_1"], ["samples_col"]),  # [B, 1]
        helper.make_node("Less", ["t_row", "samples_col"], ["inside_b"]),
        helper.make_node("Cast", ["inside_b"], ["inside"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["lengths_col"], ["lengths_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["lengths_f", "step_hz"], ["extra_hz"]),
        helper.make_node("Add", ["extra_hz", "base_hz"], ["hz"]),              # [B, 1]
        helper.make_node("Mul", ["hz", "two_pi_over_rate"], ["omega"]),
        helper.make_node("Mul", ["omega", "t_row"], ["phase"]),                # [B, N]
        helper.make_node("Sin", ["phase"], ["sine"]),
        helper.make_node("Mul", ["sine", "half"], ["wave"]),
        helper.make_node("Mul", ["wave", "inside"], ["audio"]),
        helper.make_node("Unsqueeze", ["audio", "axes_12"], ["output"]),       # [B, 1, 1, N]
    ]
    inputs = [
        helper.make_tensor_value_info("input", TensorProto.INT64, ["batch_size", "phonemes"]),
        helper.make_tensor_value_info("input_lengths", TensorProto.INT64, ["batch_size"]),
        helper.make_tensor_value_info("scales", TensorProto.FLOAT, [3]),
    ]
    if speakers > 1:
        inputs.append(helper.make_tensor_value_info("sid", TensorProto.INT64, [1]))
    outputs = [helper.make_tensor_value_info(
        "output", TensorProto.FLOAT, ["batch_size", "time", 1, "Unsqueezeoutput_dim_3"])]
    if durations:
        nodes.append(helper.make_node("Unsqueeze", ["frames", "axes_1"], ["/dp/Ceil_output_0"]))
        outputs.append(helper.make_tensor_value_info(
            "/dp/Ceil_output_0", TensorProto.FLOAT, ["batch_size", 1, "phonemes"]))
    graph = helper.make_graph(nodes, "piper_test", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def piper_config(name, speakers, espeak_voice="en-us", language="en_US"):
    config = {
        "dataset": name,
        "audio": {"sample_rate": PIPER_RATE, "quality": "medium"},
        "espeak": {"voice": espeak_voice},
        "language": {"code": language},
        "inference": {"noise_scale": 0.667, "length_scale": 1, "noise_w": 0.8},
        "phoneme_type": "espeak",
        "phoneme_map": {},
        "phoneme_id_map": PIPER_ID_MAP,
        "num_symbols": 256,
        "num_speakers": speakers,
        "speaker_id_map": {} if speakers == 1 else {"alice": 0, "bob": 1, "carol": 2},
        "piper_version": "1.0.0",
    }
    if speakers > 1:
        config["inference"].update({"noise_scale": 0.333, "noise_w": 0.333})
    return config


def write_piper(folder, stem, speakers=1, durations=False, **config_args):
    os.makedirs(folder, exist_ok=True)
    onnx.save(piper_graph(speakers, durations), os.path.join(folder, stem + ".onnx"))
    with open(os.path.join(folder, stem + ".onnx.json"), "w", encoding="utf-8") as f:
        json.dump(piper_config(stem, speakers, **config_args), f, ensure_ascii=False, indent=2)


def kokoro_graph(ids_name, speed_type, with_metadata, with_duration):
    nodes = [
        const("zero_f", np.array(0.0, dtype=np.float32)),
        const("one_f", np.array(1.0, dtype=np.float32)),
        const("two_f", np.array(2.0, dtype=np.float32)),
        const("frame", np.array(600.0, dtype=np.float32)),
        const("omega", np.array(2 * np.pi * 220.0 / KOKORO_RATE, dtype=np.float32)),
        const("minus_one_1d", np.array([-1], dtype=np.int64)),
        const("axes_1", np.array([1], dtype=np.int64)),
        const("zero_idx", np.array([0], dtype=np.int64)),
        const("one_idx", np.array([1], dtype=np.int64)),
        const("flat", np.array([-1], dtype=np.int64)),
        # the tokens between the two pads
        helper.make_node("Slice", [ids_name, "one_idx", "minus_one_1d", "axes_1"], ["inner"]),
        helper.make_node("Cast", ["inner"], ["inner_f"], to=TensorProto.FLOAT),
        helper.make_node("Mod", ["inner_f", "two_f"], ["parity"], fmod=1),
        helper.make_node("Add", ["parity", "one_f"], ["base_frames"]),
        helper.make_node("Cast", ["speed"], ["speed_f"], to=TensorProto.FLOAT),
        helper.make_node("Div", ["base_frames", "speed_f"], ["raw_frames"]),
        helper.make_node("Round", ["raw_frames"], ["rounded"]),
        helper.make_node("Max", ["rounded", "one_f"], ["frames"]),             # [1, T-2]
        helper.make_node("ReduceSum", ["frames"], ["total_frames"], keepdims=0),
        helper.make_node("Mul", ["total_frames", "frame"], ["samples"]),
        helper.make_node("Range", ["zero_f", "samples", "one_f"], ["t"]),
        helper.make_node("Mul", ["t", "omega"], ["phase"]),
        helper.make_node("Sin", ["phase"], ["sine"]),
        helper.make_node("Slice", ["style", "zero_idx", "one_idx", "axes_1"], ["amp_2d"]),
        helper.make_node("Reshape", ["amp_2d", "flat"], ["amp"]),
        helper.make_node("Mul", ["sine", "amp"], ["waveform"]),
    ]
    inputs = [
        helper.make_tensor_value_info(ids_name, TensorProto.INT64, [1, "input_ids_len"]),
        helper.make_tensor_value_info("style", TensorProto.FLOAT, [1, 256]),
        helper.make_tensor_value_info("speed", speed_type, [1]),
    ]
    outputs = [helper.make_tensor_value_info("waveform", TensorProto.FLOAT, ["num_samples"])]
    if with_duration:
        nodes += [helper.make_node("Reshape", ["frames", "flat"], ["frames_flat"]),
                  helper.make_node("Cast", ["frames_flat"], ["duration"], to=TensorProto.INT64)]
        outputs.append(helper.make_tensor_value_info("duration", TensorProto.INT64, ["tokens"]))
    graph = helper.make_graph(nodes, "kokoro_test", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    if with_metadata:
        entry = model.metadata_props.add()
        entry.key = "kokoro_config"
        entry.value = json.dumps({"vocab": KOKORO_VOCAB, "n_token": 178}, ensure_ascii=False)
    onnx.checker.check_model(model)
    return model


KOKORO_VOICES = ["af_test", "bm_test", "ff_test"]


def voice_pack(index):
    pack = np.zeros((510, 1, 256), dtype=np.float32)
    pack[:, 0, 0] = 0.1 * (index + 1) + 0.001 * np.arange(510, dtype=np.float32)
    pack[:, 0, 1:] = np.linspace(-1, 1, 255, dtype=np.float32)
    return pack


def write_kokoro(folder, model_name="kokoro-v1.0.onnx", voices_name="voices-v1.0.bin"):
    """kokoro-onnx layout: model + NPZ voices file; vocab in the graph's metadata."""
    os.makedirs(folder, exist_ok=True)
    onnx.save(kokoro_graph("input_ids", TensorProto.FLOAT, True, True),
              os.path.join(folder, model_name))
    with open(os.path.join(folder, voices_name), "wb") as f:
        np.savez(f, **{name: voice_pack(i) for i, name in enumerate(KOKORO_VOICES)})


def write_kokoro_alt(folder):
    """onnx-community / old export layout: `tokens`, int32 speed, config.json, voices/*.bin."""
    os.makedirs(os.path.join(folder, "voices"), exist_ok=True)
    onnx.save(kokoro_graph("tokens", TensorProto.INT32, False, False),
              os.path.join(folder, "model.onnx"))
    with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as f:
        json.dump({"vocab": KOKORO_VOCAB}, f, ensure_ascii=False)
    for i, name in enumerate(KOKORO_VOICES):
        voice_pack(i).tofile(os.path.join(folder, "voices", name + ".bin"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="folder to write the models into")
    args = parser.parse_args()
    out = args.out
    # A models folder as --models sees it: Piper voices and a Kokoro model side by side.
    models = os.path.join(out, "models")
    write_piper(models, "en_US-test-medium")
    write_piper(models, "en_US-multi-medium", speakers=3)
    write_piper(models, "de_DE-test-medium", espeak_voice="de", language="de_DE")
    write_kokoro(models)
    # Graph variants used by single tests.
    write_piper(os.path.join(out, "batch"), "en_US-batch-medium", durations=True)
    write_kokoro_alt(os.path.join(out, "kokoro_alt"))
    with open(os.path.join(out, "piper_id_map.json"), "w", encoding="utf-8") as f:
        json.dump(PIPER_ID_MAP, f, ensure_ascii=False)
    print("test models written to", out)


if __name__ == "__main__":
    main()
