#!/usr/bin/python3
"""int8 copy of a CosyVoice bundle: the LLM's MatMuls in ONNX Runtime's dynamic-quantization form.

  /usr/bin/python3 tools/cosyvoice_export/quantize_llm.py SRC_BUNDLE DST_BUNDLE [--min-weight-size N]
                                                           [--with-flow]

DST gets every file of SRC (hard links where the filesystem allows, else copies) except the LLM
graph (manifest role llm_step, the float32 step graph), which is rewritten: each MatMul whose
second input is a constant 2-D weight [K, N], and each Gemm (transA 0, alpha = beta = 1) with a
constant B, becomes one com.microsoft DynamicQuantizeMatMul (A float, B int8, b_scale [N], bias):
weights quantized once, symmetric int8 per output column (scale = max|w| / 127 per column, zero
point 0); activations quantized per tensor to uint8 by ORT at run time. A following
`Add(MatMul, const [N])` (torch.onnx's Linear on 3-D input: MatMul then Add of the bias) is
folded in as the op's bias. Everything else (embeddings, norms, attention, RoPE) stays float32.

Why these choices: DynamicQuantizeMatMul and MatMulIntegerToFloat are ORT CPU contrib kernels
(both present in third_party/onnxruntime's libonnxruntime.so); the former fuses the activation's
quantization and takes per-column scales. Symmetric int8 weights with uint8 activations is ORT's
default (U8S8). On CPUs without VNNI, AVX2's u8 x s8 multiply (vpmaddubsw) can saturate int16;
this machine has avx512_vnni, and the logit error is what decides (verify-bundle's
llm.prefill/llm.decode goldens report it; see bench/RESULTS.md). Weights under MIN_WEIGHT_SIZE
values stay float: their matmul is cheaper than the quantize step (the tiny test bundle's are all
smaller: pass --min-weight-size 0 to quantize them anyway, e.g. to try the tool on it).

--with-flow quantizes the flow's estimator (role flow_estimator) the same way: 64 M of its 71 M
parameters are MatMul weights, and on a CPU the flow, not the LLM, is most of a piece's time
(bench/RESULTS.md, CosyVoice2 (e): 1.6x faster on 2 cores). Its effect on a trained model's
audio is not known here (random weights only); compare by ear before serving it.
"""
import argparse
import json
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

MIN_WEIGHT_SIZE = 4096
LLM_ROLES = ("llm_step",)  # the CPU's float32 step graph; the CUDA copies stay as they are


def quantize_columns(w):
    """[K, N] float -> int8 [K, N] and per-column float scales [N] (symmetric, zero point 0)."""
    scale = np.abs(w).max(axis=0) / 127.0
    scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
    q = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
    return q, scale


def quantize_graph(model, min_weight_size):
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    consumers = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    outputs = {o.name for o in graph.output}
    new_nodes, new_inits, folded = [], [], set()
    quantized = 0
    for node in graph.node:
        if id(node) in folded:
            continue
        weight, bias, out, add = None, None, node.output[0] if node.output else None, None
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if node.op_type == "MatMul" and node.input[1] in inits:
            weight = numpy_helper.to_array(inits[node.input[1]])
            # Linear on 3-D input: MatMul, then Add of a constant [N] bias; fold it in.
            users = consumers.get(out, [])
            if len(users) == 1 and users[0].op_type == "Add" and out not in outputs:
                other = users[0].input[1] if users[0].input[0] == out else users[0].input[0]
                if other in inits and weight.ndim == 2:
                    b = numpy_helper.to_array(inits[other])
                    if b.shape == (weight.shape[1],):
                        bias, out, add = b, users[0].output[0], users[0]
        elif (node.op_type == "Gemm" and node.input[1] in inits and attrs.get("transA", 0) == 0
              and attrs.get("alpha", 1.0) == 1.0 and attrs.get("beta", 1.0) == 1.0):
            weight = numpy_helper.to_array(inits[node.input[1]])
            if attrs.get("transB", 0):
                weight = weight.T
            if len(node.input) > 2 and node.input[2]:
                if node.input[2] not in inits:
                    weight = None
                else:
                    bias = numpy_helper.to_array(inits[node.input[2]]).reshape(-1)
                    if bias.shape != (weight.shape[1],):
                        weight = None  # a broadcast bias of another shape: leave it
        if weight is None or weight.ndim != 2 or weight.size < min_weight_size:
            new_nodes.append(node)
            continue
        if add is not None:
            folded.add(id(add))
        prefix = (node.name or node.output[0]).replace("/", "_").strip("_") + "_int8"
        q, scale = quantize_columns(weight.astype(np.float32))
        new_inits += [numpy_helper.from_array(q, prefix + "_w"),
                      numpy_helper.from_array(scale, prefix + "_w_scale")]
        inputs = [node.input[0], prefix + "_w", prefix + "_w_scale", ""]
        if bias is not None:
            new_inits.append(numpy_helper.from_array(bias.astype(np.float32), prefix + "_bias"))
            inputs.append(prefix + "_bias")
        else:
            inputs.pop()  # no zero point, no bias
        new_nodes.append(helper.make_node("DynamicQuantizeMatMul", inputs, [out],
                                          name=prefix, domain="com.microsoft"))
        quantized += 1
    del graph.node[:]
    graph.node.extend(new_nodes)
    used = {name for n in graph.node for name in n.input}
    kept = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept + new_inits)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return quantized


def link_tree(src, dst):
    def copy(s, d):
        try:
            os.link(s, d)
        except OSError:
            shutil.copy2(s, d)
    shutil.copytree(src, dst, copy_function=copy)


def main(src, dst, min_weight_size, with_flow):
    if os.path.exists(dst):
        sys.exit(f"{dst} exists; remove it first")
    manifest = json.load(open(os.path.join(src, "manifest.json")))
    graphs = manifest.get("graphs", {})
    roles = LLM_ROLES + (("flow_estimator",) if with_flow else ())
    files = [graphs[r]["file"] for r in roles if r in graphs]
    if len(files) != len(roles):
        sys.exit(f"{src}/manifest.json: graphs {', '.join(roles)} expected, found "
                 f"{', '.join(sorted(graphs))}")
    link_tree(src, dst)
    for rel in files:
        path = os.path.join(dst, rel)
        model = onnx.load(os.path.join(src, rel))
        before = os.path.getsize(path)
        count = quantize_graph(model, min_weight_size)
        os.unlink(path)  # a hard link to the fp32 file: never write through it
        onnx.save(model, path)
        print(f"{rel}: {count} MatMul/Gemm -> DynamicQuantizeMatMul, "
              f"{before / 1e6:.0f} MB -> {os.path.getsize(path) / 1e6:.0f} MB")
    manifest.setdefault("export", {})["quantization"] = {
        "tool": "tools/cosyvoice_export/quantize_llm.py", "graphs": list(roles),
        "op": "com.microsoft.DynamicQuantizeMatMul", "weights": "int8 symmetric per column"}
    manifest_path = os.path.join(dst, "manifest.json")
    os.unlink(manifest_path)
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("src")
    parser.add_argument("dst")
    parser.add_argument("--min-weight-size", type=int, default=MIN_WEIGHT_SIZE)
    parser.add_argument("--with-flow", action="store_true",
                        help="quantize the flow's estimator too (see above)")
    args = parser.parse_args()
    main(args.src, args.dst, args.min_weight_size, args.with_flow)
