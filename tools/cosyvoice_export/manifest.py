"""manifest.json of a bundle (docs/cosyvoice-bundle.md): the numbers of the model, and for every
graph its file and input/output signature read back from the ONNX file itself, so that the
manifest describes what is on disk; `voxserve check-model` then checks the two agree."""
import json
import os

import numpy as np
import onnx

FORMAT = "voxserve-cosyvoice-bundle"
# 2: the LLM as one GroupQueryAttention step graph (llm_step*.onnx, llm_step_graph.py).
FORMAT_VERSION = 2
_DTYPES = {onnx.TensorProto.FLOAT: "float32", onnx.TensorProto.INT32: "int32",
           onnx.TensorProto.INT64: "int64", onnx.TensorProto.FLOAT16: "float16",
           onnx.TensorProto.BOOL: "bool",
           onnx.TensorProto.BFLOAT16: "bfloat16"}


def _tensors(values):
    out = []
    for v in values:
        t = v.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?")
                 for d in t.shape.dim]
        out.append({"name": v.name, "dtype": _DTYPES.get(t.elem_type, str(t.elem_type)),
                    "shape": shape})
    return out


def graph_entry(bundle, rel, origin):
    model = onnx.load(os.path.join(bundle, rel), load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    inputs = [v for v in model.graph.input if v.name not in inits]
    return {"file": rel, "origin": origin, "inputs": _tensors(inputs),
            "outputs": _tensors(model.graph.output)}


def tensor_entry(bundle, rel, array):
    np.save(os.path.join(bundle, rel), np.ascontiguousarray(array))
    return {"file": rel, "dtype": str(array.dtype), "shape": list(array.shape)}


def write(bundle, manifest):
    with open(os.path.join(bundle, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
