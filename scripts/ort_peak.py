#!/usr/bin/env python3
"""Peak memory growth of one training step of an ONNX model in ONNX Runtime.

  ort_peak.py MODEL [name=value ...]      e.g. ort_peak.py model.onnx batch=4 seq=256

Prints one number: MiB of peak RSS growth during one `run`, from after the
session is built and the inputs are made to the step's high-water mark
(/proc/self/clear_refs resets the mark first). So that this is what the
step's tensors need, ORT's CPU arena and memory patterns are off, one
thread runs, and the script re-runs itself with MALLOC_MMAP_THRESHOLD_=65536
(freed tensors leave RSS at once). Two runs agree within a fraction of a MiB
(docs/ort-anchoring.md). Graph inputs get seeded data: parameters small and
random, integer inputs in [0, 2), bool inputs True, accumulation buffers 0.
Level: ORT_LEVEL=DISABLE_ALL|BASIC|EXTENDED|ALL (default ALL). ORT_MEM_REUSE=0
turns off ORT's static buffer reuse (SessionOptions.enable_mem_reuse), which
otherwise holds a freed buffer for a later tensor of the same size and so
undoes a plan's frees (docs/ort-anchoring.md).
"""
import os
import sys

THRESHOLD = "65536"


def rss_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


def feeds_for(model, dims):
    import numpy as np
    import onnx

    rng = np.random.default_rng(0)
    feeds = {}
    for v in model.graph.input:
        t = v.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else dims[d.dim_param] for d in t.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)
        if v.name.endswith(".accumulation.buffer"):
            feeds[v.name] = np.zeros(shape, dtype)
        elif dtype == np.bool_:
            feeds[v.name] = np.ones(shape, dtype=bool)
        elif np.issubdtype(dtype, np.integer):
            feeds[v.name] = rng.integers(0, 2, size=shape).astype(dtype)
        else:
            feeds[v.name] = (rng.standard_normal(shape) * 0.02).astype(dtype)
    return feeds


def main() -> int:
    if os.environ.get("MALLOC_MMAP_THRESHOLD_") != THRESHOLD:
        os.environ["MALLOC_MMAP_THRESHOLD_"] = THRESHOLD
        os.execv(sys.executable, [sys.executable, *sys.argv])
    import onnx

    from ort_session import session, session_options

    path = sys.argv[1]
    dims = {k: int(v) for k, v in (a.split("=", 1) for a in sys.argv[2:])}
    model = onnx.load(path)
    for n in model.graph.node:  # comparable masks in every graph
        if n.op_type == "Dropout" and not any(a.name == "seed" for a in n.attribute):
            n.attribute.append(onnx.helper.make_attribute("seed", 7))
    so = session_options(os.environ.get("ORT_LEVEL", "ALL"))
    so.enable_cpu_mem_arena = False
    so.enable_mem_pattern = False
    so.enable_mem_reuse = os.environ.get("ORT_MEM_REUSE", "1") == "1"
    sess = session(model, so)
    feeds = feeds_for(model, dims)
    names = [o.name for o in sess.get_outputs()]
    sess.run(names, feeds)  # warm: kernels' one-time buffers are not the step's
    before = rss_kib("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    outs = sess.run(names, feeds)
    peak = rss_kib("VmHWM")
    del outs
    print(f"{(peak - before) / 1024:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
