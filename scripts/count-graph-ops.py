#!/usr/bin/python3
"""Counts the operators of an ONNX graph (ORT's optimized-model dump of the LLM step graph) and
appends one JSON line to a file: {"kind": "optimized_graph", "precision", "memcpy_nodes",
"nodes", "ops"}. Exits 1 when the graph has Memcpy nodes (ORT's copies between the host and the
device: a node left on the CPU provider). scripts/gpu-check.sh runs it.

  scripts/count-graph-ops.py GRAPH.onnx PRECISION OUT.jsonl"""
import collections
import json
import sys

import onnx

if len(sys.argv) != 4:
    sys.exit(__doc__)
model = onnx.load(sys.argv[1], load_external_data=False)
ops = collections.Counter(n.op_type for n in model.graph.node)
memcpy = sum(c for op, c in ops.items() if op.startswith("Memcpy"))
with open(sys.argv[3], "a") as f:
    f.write(json.dumps({"kind": "optimized_graph", "precision": sys.argv[2], "memcpy_nodes": memcpy,
                        "nodes": sum(ops.values()), "ops": dict(ops)}) + "\n")
sys.exit(1 if memcpy else 0)
