#!/usr/bin/env python3
"""Which data dependency makes ONNX Runtime run a node after an anchor node?

Research for issue 14 (docs/ort-anchoring.md). A tiny graph: x -> Relu (n1)
-> Sigmoid -> Tanh -> Exp (anchor); a "clone" Neg reads n1's output and its
result is added to the anchor's. Without a dependency ORT runs the clone
right after n1. Two anchors are tried, each a Reshape of the clone's input
to its own shape, at every graph optimisation level, and the script prints
ORT's profiled node order, which anchor nodes survive optimisation, and
whether the output stays bitwise-equal:

  shape: Reshape(a, Concat(Slice(Shape(anchor), 0, 0), Shape(a)))
  data:  Reshape(a, Concat(Reshape(Cast(Slice(anchor, 0, 0, axis 0)), [-1]), Shape(a)))

Exit status 1 if the data anchor fails at any level. Needs onnx and
onnxruntime (the pinned venv of scripts/requirements.txt).
"""
import json
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h

LEVELS = {
    "DISABLE_ALL": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
    "BASIC": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    "EXTENDED": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
    "ALL": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
}


def anchor_nodes(variant):
    """Nodes (named k_*) that make a2 = a, depending on the anchor's output c3."""
    if variant == "shape":
        return [
            h.make_node("Shape", ["c3"], ["s_anchor"], name="k_shape"),
            h.make_node("Slice", ["s_anchor", "zero", "zero"], ["s_empty"], name="k_slice"),
        ]
    return [
        h.make_node("Slice", ["c3", "zero", "zero", "zero"], ["e"], name="k_slice"),
        h.make_node("Cast", ["e"], ["e_int"], to=T.INT64, name="k_cast"),
        h.make_node("Reshape", ["e_int", "minus_one"], ["s_empty"], name="k_flat"),
    ]


def model(variant):
    nodes = [
        h.make_node("Relu", ["x"], ["a"], name="n1"),
        h.make_node("Sigmoid", ["a"], ["c1"], name="n2"),
        h.make_node("Tanh", ["c1"], ["c2"], name="n3"),
        h.make_node("Exp", ["c2"], ["c3"], name="anchor"),
    ]
    source = "a"
    if variant != "none":
        nodes += anchor_nodes(variant)
        nodes += [
            h.make_node("Shape", ["a"], ["s_a"], name="k_shape_a"),
            h.make_node("Concat", ["s_empty", "s_a"], ["s_new"], axis=0, name="k_concat"),
            h.make_node("Reshape", ["a", "s_new"], ["a2"], name="k_reshape"),
        ]
        source = "a2"
    nodes += [
        h.make_node("Neg", [source], ["r"], name="clone"),
        h.make_node("Add", ["r", "c3"], ["y"], name="out"),
    ]
    inits = [
        h.make_tensor("zero", T.INT64, [1], [0]),
        h.make_tensor("minus_one", T.INT64, [1], [-1]),
    ]
    graph = h.make_graph(
        nodes, "probe", [h.make_tensor_value_info("x", T.FLOAT, [64, 64])],
        [h.make_tensor_value_info("y", T.FLOAT, [64, 64])], inits)
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def run(m, level, x, tmp):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.enable_profiling = True
    so.profile_file_prefix = tmp + "/profile"
    so.optimized_model_filepath = tmp + "/optimized.onnx"
    so.log_severity_level = 3
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    y = s.run(None, {"x": x})[0]
    events = [e for e in json.load(open(s.end_profiling()))
              if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
    order = [e["name"][: -len("_kernel_time")] for e in sorted(events, key=lambda e: e["ts"])]
    kept = [n.name for n in onnx.load(tmp + "/optimized.onnx").graph.node if n.name.startswith("k_")]
    return y, order, kept


def main():
    x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    reference = None
    data_ok = True
    for variant in ["none", "shape", "data"]:
        for name, level in LEVELS.items():
            with tempfile.TemporaryDirectory() as tmp:
                y, order, kept = run(model(variant), level, x, tmp)
            reference = y if reference is None else reference
            after = "clone" in order and order.index("clone") > order.index("anchor")
            if variant == "data":
                data_ok = data_ok and after and np.array_equal(y, reference)
            print(f"{variant:5} {name:11} bitwise={np.array_equal(y, reference)} "
                  f"clone_after_anchor={after} order={order} anchor_nodes_kept={kept}")
    return 0 if data_ok else 1


if __name__ == "__main__":
    sys.exit(main())
