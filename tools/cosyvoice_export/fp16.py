#!/usr/bin/python3
"""fp16 copy of a CosyVoice bundle's flow and HiFT graphs, for the CUDA provider.

  /usr/bin/python3 tools/cosyvoice_export/fp16.py SRC_BUNDLE DST_BUNDLE
  (export.py --fp16 writes one beside its bundle: OUT-fp16)

DST gets every file of SRC (hard links where the filesystem allows, else copies) except the
graphs of the roles below, rewritten so that their compute-heavy operators run in float16:
each MatMul, Gemm, Conv and ConvTranspose takes its inputs through Cast(to=float16) (weights are
stored as float16 initializers instead: the files halve) and gives its output back through
Cast(to=float), so every other operator, and the graph's inputs and outputs, stay float32: the
C++ stages feed and read the same tensors, and the precision-sensitive operators (LayerNorm,
Softmax, the Snake activations' Sin/Pow, Exp, the time embedding's Sin/Cos, Erf) keep float32.
On a GPU the converted operators are where the time goes (tensor cores); ORT's CPU provider runs
them through its own casts to float32, so a CPU verify-bundle measures the rounding of the
weights and of the activations at the casts, not float16 arithmetic.

Roles converted: flow_encoder, flow_encoder_stream, flow_estimator, flow_estimator_stream
(CosyVoice3's chunk-masked DiT), hift_decoder. CosyVoice3's DiT keeps its LayerNorms, AdaLN
shifts and rotary in float32 this way (upstream warns of fp16 DiT).
Not converted: hift_f0 (its f0 in Hz is integrated into the source's phase, 480 samples per
frame: float16's 2^-11 relative step is 0.15 Hz at 300 Hz, a phase drift of a sixth of a
cycle per second of audio, and the graph is about 1 % of HiFT's work); the LLM (other issue:
quantize_llm.py); campplus and the speech tokenizer (run once per voice registration).

The goldens stay upstream's float32 outputs; the stages these graphs feed get the tolerances
FP16_ATOL in goldens/index.json, so `voxserve verify-bundle DST [--execution-provider cuda]`
checks the copy against float32 with them.
"""
import argparse
import json
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROLES = ("flow_encoder", "flow_encoder_stream", "flow_estimator", "flow_estimator_stream",
         "hift_decoder")
KEPT = {"hift_f0": "f0 feeds the source's phase integration; float16 would drift it (see above)"}
HEAVY_OPS = ("MatMul", "Gemm", "Conv", "ConvTranspose")
# Stated tolerances against the float32 goldens (max abs error; mel and mu are O(1-10), audio
# in [-1, 1]). Measured on the tiny bundle, CPU provider: docs/cosyvoice-generation.md, "On a GPU".
# float16's unit roundoff is 4.9e-4, so each converted operator moves O(1) values by ~1e-3;
# ten Euler steps with the guidance's 1.7 weight feed those errors back into x. Measured on the
# tiny bundle (CPU provider): encoder 1.2e-3, estimator 4.7e-3, whole flow 6.7e-3, HiFT decoder
# 1.7e-4, HiFT audio 2.6e-5 -- the bounds leave 4x and more for trained weights and the GPU's
# own float16 arithmetic (gpu-check.sh measures that).
FP16_ATOL = {"flow.encoder": 1e-2, "flow.stream_encoder": 1e-2, "flow.estimator": 2e-2,
             "flow.estimator_stream": 2e-2, "flow.full": 5e-2, "flow.stream": 5e-2,
             "hift.decoder": 5e-3, "hift.full": 5e-3, "hift.stream": 5e-3}


def convert_graph(model):
    """Rewrites model in place; returns how many operators now run in float16."""
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    consumers = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    half_of = {}  # float32 tensor name -> its float16 twin
    new_inits, nodes, converted = [], [], 0

    def half(name):
        if name not in half_of:
            twin = name + "_fp16"
            init = inits.get(name)
            if init is not None and init.data_type == TensorProto.FLOAT:
                new_inits.append(numpy_helper.from_array(
                    numpy_helper.to_array(init).astype(np.float16), twin))
            else:
                nodes.append(helper.make_node("Cast", [name], [twin], to=TensorProto.FLOAT16,
                                              name=twin + "_cast"))
            half_of[name] = twin
        return half_of[name]

    for node in graph.node:
        if node.op_type not in HEAVY_OPS:
            nodes.append(node)
            continue
        inputs = [half(name) if name else "" for name in node.input]
        outputs = [name + "_fp16out" for name in node.output]
        nodes.append(helper.make_node(node.op_type, inputs, outputs, name=(node.name or "") + "_fp16",
                                      domain=node.domain))
        nodes[-1].attribute.extend(node.attribute)
        for fp16, fp32 in zip(outputs, node.output):
            nodes.append(helper.make_node("Cast", [fp16], [fp32], to=TensorProto.FLOAT,
                                          name=fp32 + "_cast_back"))
        converted += 1
    # Still in topological order: each Cast went in just before the first node that reads it,
    # after the node that makes its input (the original order is topological).
    del graph.node[:]
    graph.node.extend(nodes)
    used = {name for n in graph.node for name in n.input}
    kept = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept + new_inits)
    return converted


def link_tree(src, dst):
    def copy(s, d):
        try:
            os.link(s, d)
        except OSError:
            shutil.copy2(s, d)
    shutil.copytree(src, dst, copy_function=copy)


def rewrite(path, write):
    """Replaces a (possibly hard-linked) file without writing through the link."""
    os.unlink(path)
    write(path)


def convert_bundle(src, dst, if_src=False):
    if if_src and not os.path.exists(os.path.join(src, "manifest.json")):
        print(f"no bundle at {src} (its fixture needs VOXSERVE_COSYVOICE_REF); nothing to do")
        return []
    if os.path.exists(dst):
        sys.exit(f"{dst} exists; remove it first")
    manifest = json.load(open(os.path.join(src, "manifest.json")))
    graphs = manifest.get("graphs", {})
    link_tree(src, dst)
    done = []
    for role in ROLES:
        if role not in graphs:
            continue  # flow_encoder_stream is optional
        rel = graphs[role]["file"]
        path = os.path.join(dst, rel)
        model = onnx.load(os.path.join(src, rel))
        before = os.path.getsize(path)
        count = convert_graph(model)
        onnx.checker.check_model(model)
        rewrite(path, lambda p: onnx.save(model, p))
        print(f"{rel}: {count} operators in float16, "
              f"{before / 1e6:.1f} MB -> {os.path.getsize(path) / 1e6:.1f} MB")
        done.append(role)
    manifest.setdefault("export", {})["fp16"] = {
        "tool": "tools/cosyvoice_export/fp16.py", "graphs": done, "ops": list(HEAVY_OPS),
        "kept_float32": KEPT, "io": "float32"}
    rewrite(os.path.join(dst, "manifest.json"),
            lambda p: json.dump(manifest, open(p, "w"), indent=1))
    index_rel = manifest.get("goldens", {}).get("index")
    if index_rel:
        index = json.load(open(os.path.join(src, index_rel)))
        for stage in index.get("stages", []):
            prefix = stage["name"].split("/")[0]
            if prefix in FP16_ATOL:
                stage["atol"] = FP16_ATOL[prefix]
                stage["note"] = (stage.get("note", "") + " [fp16 copy: float16 MatMul/Gemm/Conv "
                                 "against the float32 golden]").strip()
        rewrite(os.path.join(dst, index_rel), lambda p: json.dump(index, open(p, "w"), indent=1))
    return done


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("src")
    parser.add_argument("dst")
    parser.add_argument("--replace", action="store_true", help="remove DST first")
    parser.add_argument("--if-src", action="store_true",
                        help="test fixtures: without a bundle at SRC, say so and exit 0")
    args = parser.parse_args()
    if args.replace and os.path.exists(args.dst):
        shutil.rmtree(args.dst)
    convert_bundle(args.src, args.dst, args.if_src)
