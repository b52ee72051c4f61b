"""Stand-in for the part of Python onnxruntime that upstream's CosyVoice frontend calls
(cosyvoice/cli/frontend.py:42-48, 99-103, 115-116): SessionOptions, GraphOptimizationLevel and
InferenceSession(path).get_inputs()/run(). Debian 12 packages no onnxruntime for Python and its
onnx 1.12 has no onnx.reference evaluator, so this file evaluates the .onnx file itself: it
parses it with Debian's `onnx` and runs its nodes in order with numpy (torch for Conv). It knows
only the operators of the random-weight bundles' CAM++ and speech-tokenizer stand-in graphs
(tools/cosyvoice_export/prompt_standins.py) and refuses any other by name, so a graph it cannot
run fails loudly instead of computing something else. Written by us; not ONNX Runtime code.

Single-threaded, no state shared between sessions; a session is safe to use from one thread.
"""
import numpy as np
import onnx
from onnx import mapping, numpy_helper
import torch


class GraphOptimizationLevel:  # accepted and ignored: evaluation is node by node
    ORT_DISABLE_ALL, ORT_ENABLE_BASIC, ORT_ENABLE_EXTENDED, ORT_ENABLE_ALL = 0, 1, 2, 99


class SessionOptions:
    def __init__(self):
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.intra_op_num_threads = 0


class NodeArg:
    def __init__(self, value_info):
        self.name = value_info.name
        dims = value_info.type.tensor_type.shape.dim
        self.shape = [d.dim_param or d.dim_value for d in dims]


def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _axes(inputs, attrs, index):
    if len(inputs) > index and inputs[index] is not None:
        return tuple(int(a) for a in inputs[index].reshape(-1))
    return tuple(attrs["axes"]) if "axes" in attrs else None


def _div(a, b):
    # ONNX Div on integers truncates toward zero.
    if np.issubdtype(a.dtype, np.integer):
        return (np.trunc(a / b)).astype(a.dtype)
    return (a / b).astype(a.dtype)


def _gemm(x, attrs):
    a, b = x[0], x[1]
    if attrs.get("transA", 0):
        a = a.T
    if attrs.get("transB", 0):
        b = b.T
    y = attrs.get("alpha", 1.0) * (a @ b)
    if len(x) > 2:
        y = y + attrs.get("beta", 1.0) * x[2]
    return y.astype(np.float32)


def _conv(x, attrs):
    w = torch.from_numpy(np.array(x[1]))  # a copy: initializers are read-only
    b = torch.from_numpy(np.array(x[2])) if len(x) > 2 else None
    inp = torch.from_numpy(np.array(x[0]))
    spatial = inp.dim() - 2
    if spatial != 1 or attrs.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        raise NotImplementedError("onnxruntime stand-in: only 1-D Conv with explicit pads")
    pads = attrs.get("pads", [0, 0])
    inp = torch.nn.functional.pad(inp, (pads[0], pads[1]))
    out = torch.nn.functional.conv1d(inp, w, b, stride=attrs.get("strides", [1])[0],
                                     dilation=attrs.get("dilations", [1])[0],
                                     groups=attrs.get("group", 1))
    return out.numpy()


def _slice(x):
    data, starts, ends = x[0], x[1], x[2]
    axes = x[3] if len(x) > 3 else np.arange(len(starts))
    steps = x[4] if len(x) > 4 else np.ones(len(starts), dtype=np.int64)
    index = [slice(None)] * data.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        index[int(a)] = slice(int(s), int(e), int(st))
    return data[tuple(index)]


def _reduce(fn, x, attrs, axes_input):
    axes = _axes(x, attrs, axes_input)
    return fn(x[0], axis=axes, keepdims=bool(attrs.get("keepdims", 1))).astype(x[0].dtype)


_OPS = {
    "Add": lambda x, a: np.add(x[0], x[1]),
    "Mul": lambda x, a: np.multiply(x[0], x[1]),
    "Div": lambda x, a: _div(x[0], x[1]),
    "MatMul": lambda x, a: np.matmul(x[0], x[1]),
    "Gemm": lambda x, a: _gemm(x, a),
    "Tanh": lambda x, a: np.tanh(x[0]),
    "Round": lambda x, a: np.round(x[0]),  # half to even, as ONNX defines Round
    "Clip": lambda x, a: np.clip(x[0], x[1] if len(x) > 1 else None,
                                 x[2] if len(x) > 2 else None),
    "Less": lambda x, a: np.less(x[0], x[1]),
    "Cast": lambda x, a: x[0].astype(mapping.TENSOR_TYPE_TO_NP_TYPE[a["to"]]),  # onnx 1.12 API
    "Shape": lambda x, a: np.array(x[0].shape, dtype=np.int64),
    "Gather": lambda x, a: np.take(x[0], x[1], axis=a.get("axis", 0)),
    "Unsqueeze": lambda x, a: np.expand_dims(x[0], tuple(int(i) for i in x[1])),
    "Range": lambda x, a: np.arange(x[0], x[1], x[2], dtype=x[0].dtype),
    "Slice": lambda x, a: _slice(x),
    "Conv": lambda x, a: _conv(x, a),
    "ReduceMean": lambda x, a: _reduce(np.mean, x, a, 99),  # opset 17: axes is an attribute
    "ReduceSum": lambda x, a: _reduce(np.sum, x, a, 1),     # opset 13+: axes is an input
    "Constant": lambda x, a: numpy_helper.to_array(a["value"]),
}


class InferenceSession:
    """InferenceSession(path, sess_options=None, providers=None): the graph of `path`."""

    def __init__(self, path, sess_options=None, providers=None):
        self._model = onnx.load(path)
        graph = self._model.graph
        unknown = sorted({n.op_type for n in graph.node} - set(_OPS))
        if unknown:
            raise NotImplementedError(f"onnxruntime stand-in cannot evaluate {path}: operators "
                                      f"{unknown} (it knows {sorted(_OPS)})")
        self._initializers = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        self._inputs = [NodeArg(i) for i in graph.input if i.name not in self._initializers]
        self._outputs = [NodeArg(o) for o in graph.output]

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def run(self, output_names, input_feed, run_options=None):
        values = dict(self._initializers)
        for arg in self._inputs:
            if arg.name not in input_feed:
                raise ValueError(f"onnxruntime stand-in: input '{arg.name}' not fed")
            values[arg.name] = np.asarray(input_feed[arg.name])
        for node in self._model.graph.node:
            args = [values[name] if name else None for name in node.input]
            result = _OPS[node.op_type](args, _attrs(node))
            values[node.output[0]] = np.asarray(result)
        names = output_names or [o.name for o in self._outputs]
        return [values[name] for name in names]
