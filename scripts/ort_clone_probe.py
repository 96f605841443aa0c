#!/usr/bin/env python3
"""How many of a rewritten model's recompute clones does ONNX Runtime run?

Research for issue 14 (docs/ort-anchoring.md). Usage:

  ort_clone_probe.py MODEL.memplan.onnx ANCHORED LEVEL [batch=4 seq=256 ...]

ANCHORED 1 gives each clone (a node named *_recompute) a data dependency on
the float output of the node before it in the list, the empty-slice anchor
of scripts/ort_anchor_probe.py. LEVEL is DISABLE_ALL, BASIC, EXTENDED or
ALL. Graph inputs get seeded random data (bool inputs False), Dropouts a
fixed seed, so runs are comparable; the flattened float outputs go to
/tmp/ort_clone_probe_<ANCHORED>_<LEVEL>.npy. Prints how many clones appear
in ORT's profile.
"""
import json
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import shape_inference

LEVELS = {
    "DISABLE_ALL": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
    "BASIC": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    "EXTENDED": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
    "ALL": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
}


def anchor(m):
    inferred = shape_inference.infer_shapes(m)
    values = list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output)
    is_float = {v.name for v in values if v.type.tensor_type.elem_type == T.FLOAT}
    m.graph.initializer.extend([h.make_tensor("anc_zero", T.INT64, [1], [0]),
                                h.make_tensor("anc_m1", T.INT64, [1], [-1])])
    nodes, prev, k = [], None, 0
    for n in m.graph.node:
        if n.name.endswith("_recompute") and prev is not None and n.input and n.input[0]:
            x, p = n.input[0], "anc%d" % k
            k += 1
            nodes += [
                h.make_node("Slice", [prev, "anc_zero", "anc_zero", "anc_zero"], [p + "_e"], name=p + "_slice"),
                h.make_node("Cast", [p + "_e"], [p + "_ei"], to=T.INT64, name=p + "_cast"),
                h.make_node("Reshape", [p + "_ei", "anc_m1"], [p + "_f"], name=p + "_flat"),
                h.make_node("Shape", [x], [p + "_s"], name=p + "_shape"),
                h.make_node("Concat", [p + "_f", p + "_s"], [p + "_ns"], axis=0, name=p + "_concat"),
                h.make_node("Reshape", [x, p + "_ns"], [p + "_x"], name=p + "_reshape"),
            ]
            n.input[0] = p + "_x"
        nodes.append(n)
        if not n.name.endswith("_recompute"):
            outs = [o for o in n.output if o in is_float]
            prev = outs[0] if outs else prev
    del m.graph.node[:]
    m.graph.node.extend(nodes)


def feeds_for(m, dims):
    rng = np.random.default_rng(0)
    feeds = {}
    for i in m.graph.input:
        shape = [d.dim_value if d.HasField("dim_value") else dims.get(d.dim_param, 4)
                 for d in i.type.tensor_type.shape.dim]
        t = i.type.tensor_type.elem_type
        if t == T.BOOL:
            feeds[i.name] = np.zeros(shape, dtype=bool)
        elif t == T.INT64:
            feeds[i.name] = rng.integers(0, 100, size=shape).astype(np.int64)
        else:
            feeds[i.name] = (rng.standard_normal(shape) * 0.02).astype(np.float32)
    return feeds


def main():
    path, anchored, level = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
    dims = {"batch": 4, "seq": 256}
    dims.update({k: int(v) for k, v in (a.split("=") for a in sys.argv[4:])})
    m = onnx.load(path)
    if anchored:
        anchor(m)
    for n in m.graph.node:
        if n.op_type in ("Dropout", "BiasDropout", "BitmaskDropout", "BitmaskBiasDropout"):
            n.attribute.append(h.make_attribute("seed", 7))
    so = ort.SessionOptions()
    so.graph_optimization_level = LEVELS[level]
    so.enable_profiling = True
    so.profile_file_prefix = "/tmp/ort_clone_probe"
    so.log_severity_level = 3
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    outs = s.run(None, feeds_for(m, dims))
    events = [e for e in json.load(open(s.end_profiling()))
              if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
    ran = {e["name"][: -len("_kernel_time")] for e in events}
    clones = [n.name for n in m.graph.node if n.name.endswith("_recompute")]
    print("%s %s: %d of %d clones ran, %d nodes ran" % (
        "anchored" if anchored else "plain", level, sum(c in ran for c in clones), len(clones), len(ran)))
    np.save("/tmp/ort_clone_probe_%d_%s.npy" % (anchored, level),
            np.concatenate([o.ravel().astype(np.float64) for o in outs if o.dtype.kind == "f"]))


if __name__ == "__main__":
    main()
