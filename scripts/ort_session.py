"""ONNX Runtime sessions as memplan's ORT scripts and tests open them: CPU,
one thread, quiet, at a named optimisation level; and one profiled run that
gives the order ORT actually ran the nodes in. Shared by scripts/ort_peak.py,
scripts/ort_order_report.py and tests/integration/ort_order.py."""
from __future__ import annotations

import json
import os
import tempfile

LEVEL_NAMES = ["DISABLE_ALL", "BASIC", "EXTENDED", "ALL"]


def session_options(level: str):
    """SessionOptions at `level` (one of LEVEL_NAMES), one thread, errors only."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = {
        "DISABLE_ALL": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
        "BASIC": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "EXTENDED": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "ALL": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
    }[level]
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    return so


def session(model, so):
    import onnxruntime as ort

    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def profiled_run(model, feeds: dict, level: str) -> tuple[dict, list[str]]:
    """Outputs by name, and the names of the nodes ORT ran, in the order it
    ran them (deterministic compute, a fixed seed)."""
    import onnxruntime as ort

    ort.set_seed(2024)
    with tempfile.TemporaryDirectory(prefix="memplan-ort-order-") as tmp:
        so = session_options(level)
        so.use_deterministic_compute = True
        so.enable_profiling = True
        so.profile_file_prefix = os.path.join(tmp, "profile")
        sess = session(model, so)
        names = [o.name for o in sess.get_outputs()]
        outs = dict(zip(names, sess.run(names, feeds)))
        with open(sess.end_profiling()) as f:
            events = json.load(f)
    ran = [e for e in events if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
    ran.sort(key=lambda e: e["ts"])
    return outs, [e["name"][: -len("_kernel_time")] for e in ran]
