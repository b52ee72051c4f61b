#!/usr/bin/python3
"""Writes a copy of a bundle's flow estimator whose batch axis is dynamic (upstream's export fixes
it at 2, cosyvoice/bin/export_onnx.py:80-86), so the test of FlowMatcher::RunBatch can stack
several requests' CFG row pairs in one call. Only the declared input/output shapes change: the
graph computes its reshapes from Shape ops, so the same weights run any batch.
usage: make_dynamic_batch_estimator.py BUNDLE_DIR OUT.onnx"""
import os
import sys

import onnx


def main(bundle, out):
    src = os.path.join(bundle, "flow.decoder.estimator.fp32.onnx")
    if not os.path.exists(src):
        print(f"no bundle at {bundle} (the cosyvoice_tiny_bundle fixture needs "
              "VOXSERVE_COSYVOICE_REF); nothing to do")
        return 0
    model = onnx.load(src)
    for value in list(model.graph.input) + list(model.graph.output):
        dims = value.type.tensor_type.shape.dim
        dims[0].Clear()
        dims[0].dim_param = "rows"
    onnx.checker.check_model(model)
    onnx.save(model, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
