#!/usr/bin/python3
"""int8 dynamic quantization of an ONNX graph with python3-onnx alone.

ONNX Runtime's own tool (onnxruntime.quantization.quantize_dynamic) is not packaged by Debian
and PyPI is out of reach here, so this writes the same QOperator form by hand: weights are
quantized once, activations at run time.
  MatMul(A, W)  → DynamicQuantizeLinear(A) → MatMulInteger(A_q, W_q, a_zp, w_zp) → Cast → Mul(scale)
  Conv(x, W, b) → DynamicQuantizeLinear(x) → ConvInteger(x_q, W_q, x_zp, w_zp) → Cast → Mul → Add(b)
Weights are uint8, asymmetric, per tensor: ORT's CPU ConvInteger has no kernel for int8
weights (the "Could not find an implementation for ConvInteger(10)" pitfall), and u8×u8 avoids
the AVX2 u8×s8 saturation its docs warn about. ConvTranspose has no integer form and stays
float, as in ORT's tool. Tiny weights (< 4096 values) stay float: their cost is the quantize step.

  /usr/bin/python3 quantize_dynamic.py model.onnx model.int8.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MIN_WEIGHT_SIZE = 4096


def quantize_weight(w):
    low, high = min(0.0, float(w.min())), max(0.0, float(w.max()))
    scale = (high - low) / 255.0 if high > low else 1.0
    zero_point = int(np.clip(round(-low / scale), 0, 255))
    q = np.clip(np.round(w / scale) + zero_point, 0, 255).astype(np.uint8)
    return q, np.float32(scale), np.uint8(zero_point)


def main(source, target):
    model = onnx.load(source)
    graph = model.graph
    weights = {init.name: init for init in graph.initializer}
    new_nodes, new_inits, quantized = [], [], 0
    for node in graph.node:
        kind = node.op_type
        w_name = node.input[1] if len(node.input) > 1 else ""
        if kind not in ("MatMul", "Conv") or w_name not in weights:
            new_nodes.append(node)
            continue
        w = numpy_helper.to_array(weights[w_name])
        if w.size < MIN_WEIGHT_SIZE or (kind == "MatMul" and w.ndim != 2):
            new_nodes.append(node)
            continue
        p = f"{node.name or node.output[0]}_q".replace("/", "_")
        q, scale, zp = quantize_weight(w)
        new_inits += [numpy_helper.from_array(q, p + "_w"),
                      numpy_helper.from_array(np.array(scale, np.float32), p + "_w_scale"),
                      numpy_helper.from_array(np.array(zp, np.uint8), p + "_w_zp")]
        x = node.input[0]
        new_nodes.append(helper.make_node("DynamicQuantizeLinear", [x],
                                          [p + "_x", p + "_x_scale", p + "_x_zp"]))
        if kind == "MatMul":
            new_nodes.append(helper.make_node("MatMulInteger",
                                              [p + "_x", p + "_w", p + "_x_zp", p + "_w_zp"],
                                              [p + "_i32"]))
        else:
            attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            new_nodes.append(helper.make_node("ConvInteger",
                                              [p + "_x", p + "_w", p + "_x_zp", p + "_w_zp"],
                                              [p + "_i32"], **attributes))
        new_nodes += [
            helper.make_node("Cast", [p + "_i32"], [p + "_f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", [p + "_x_scale", p + "_w_scale"], [p + "_scale"]),
        ]
        has_bias = kind == "Conv" and len(node.input) > 2 and node.input[2]
        scaled = p + "_scaled" if has_bias else node.output[0]
        new_nodes.append(helper.make_node("Mul", [p + "_f", p + "_scale"], [scaled]))
        if has_bias:
            bias = numpy_helper.to_array(weights[node.input[2]]).reshape(1, -1, *[1] * (w.ndim - 2))
            new_inits.append(numpy_helper.from_array(bias.astype(np.float32), p + "_bias"))
            new_nodes.append(helper.make_node("Add", [scaled, p + "_bias"], [node.output[0]]))
        quantized += 1
    del graph.node[:]
    graph.node.extend(new_nodes)
    graph.initializer.extend(new_inits)
    used = {name for n in graph.node for name in n.input}
    keep = [init for init in graph.initializer if init.name in used]
    del graph.initializer[:]
    graph.initializer.extend(keep)
    if all(o.domain not in ("", "ai.onnx") or o.version >= 10 for o in model.opset_import):
        onnx.checker.check_model(model)
    onnx.save(model, target)
    print(f"{target}: {quantized} MatMul/Conv nodes quantized to uint8")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
