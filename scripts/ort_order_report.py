#!/usr/bin/env python3
"""ONNX Runtime's actual node order against the rewritten model's (the plan's).

  ort_order_report.py MODEL [name=value ...] [--memplan build/cli/memplan] [--level DISABLE_ALL]

Runs MODEL once in ONNX Runtime with its profiler (one thread), then replays
tensor liveness twice with the sizes `memplan inspect --shapes` gives: in
ORT's profiled order and in the model's node-list order (for a model memplan
rewrote, the plan's order). Prints both peaks and every tensor live at ORT's
peak that the list order has freed (or not yet made) at that node, largest
first: what ORT keeps alive longer than the plan. Tensors are counted from
the node that makes them to their last reader; graph inputs are left out.
At levels above DISABLE_ALL, nodes ORT fused away are not in its profile and
their tensors are not replayed. Research tool for issue 14
(docs/ort-anchoring.md), not a test.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from ort_session import LEVEL_NAMES  # noqa: E402


def lifetimes(model, pos: dict, sources: set) -> dict:
    """tensor -> [first, last] position, over the nodes that `pos` places."""
    life = {}
    for n in model.graph.node:
        p = pos.get(n.name)
        if p is None:
            continue
        for o in n.output:
            if o:
                life.setdefault(o, [p, p])[0] = p
        for i in n.input:
            if i in life and i not in sources:
                life[i][1] = max(life[i][1], p)
    return life


def peak(life: dict, size: dict, length: int, outputs: set) -> tuple[int, int]:
    delta = [0] * (length + 2)
    for t, (a, b) in life.items():
        b = length if t in outputs else b
        delta[a] += size.get(t, 0)
        delta[b + 1] -= size.get(t, 0)
    cur, best, at = 0, 0, 0
    for i in range(length + 1):
        cur += delta[i]
        if cur > best:
            best, at = cur, i
    return best, at


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("dims", nargs="*", help="name=value")
    ap.add_argument("--memplan", default=os.path.join(HERE, "..", "build", "cli", "memplan"))
    ap.add_argument("--level", default="DISABLE_ALL", choices=LEVEL_NAMES)
    ap.add_argument("--top", type=int, default=20, help="tensors to list")
    args = ap.parse_args()
    import onnx
    import ort_peak
    import ort_session

    dims = {k: int(v) for k, v in (d.split("=", 1) for d in args.dims)}
    dim_args = [a for k, v in dims.items() for a in ("--dim", f"{k}={v}")]
    r = subprocess.run([args.memplan, "inspect", args.model, *dim_args, "--json", "--shapes"],
                       capture_output=True, text=True, check=True)
    size = {k: v["bytes"] for k, v in json.loads(r.stdout)["tensor_shapes"].items()}
    model = onnx.load(args.model)
    _, order = ort_session.profiled_run(model, ort_peak.feeds_for(model, dims), args.level)
    sources = {i.name for i in model.graph.input} | {t.name for t in model.graph.initializer}
    outputs = {o.name for o in model.graph.output}
    listed = {n.name: i for i, n in enumerate(model.graph.node)}
    ran = {name: i for i, name in enumerate(order)}
    ort_life = lifetimes(model, ran, sources)
    list_life = lifetimes(model, listed, sources)
    ort_peak_bytes, at = peak(ort_life, size, len(order), outputs)
    list_peak_bytes, list_at = peak(list_life, size, len(listed), outputs)
    mib = 2 ** 20
    print(f"{len(ran)} of {len(listed)} nodes in ORT's profile ({args.level})")
    print(f"replayed peak in ORT's order: {ort_peak_bytes / mib:.0f} MiB at node {at} ({order[at]})")
    print(f"replayed peak in list order:  {list_peak_bytes / mib:.0f} MiB at node {list_at}")
    where = listed.get(order[at])
    longer = []
    for t, (a, b) in ort_life.items():
        if not a <= at <= b or where is None or t not in list_life:
            continue
        la, lb = list_life[t]
        if not la <= where <= lb:
            longer.append((size.get(t, 0), t, a, b, la, lb))
    longer.sort(reverse=True)
    print(f"live at ORT's peak, not at that node in list order: {sum(x[0] for x in longer) / mib:.0f} MiB "
          f"in {len(longer)} tensors")
    for s, t, a, b, la, lb in longer[: args.top]:
        print(f"  {s / mib:8.1f} MiB  {t}: ORT nodes {a}-{b}, list nodes {la}-{lb}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
