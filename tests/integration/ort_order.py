"""Does ONNX Runtime run a rewritten model's recomputes and reloads where the
plan put them? (issue 14; docs/ort-anchoring.md)

The rewrite orders each recompute clone and each SwapIn after the node the
plan issues it after, through an anchor (passes/order_anchor.h): a Reshape of
the node's first input, doc string "memplan:anchor:<anchor tensor>", whose
shape is built (nodes "memplan:anchor-token:...") from the anchor's data. Here the model runs with ORT's
profiler on, one thread, at every optimisation level, and for each anchored
node ORT's actual execution order must show:

* the node itself: a clone under its own name (not merged into its original
  nor dropped); for a SwapIn, which ORT inlines and removes as an Identity,
  its anchored Reshape, which takes its place;
* after the anchor tensor's producer (after the anchor's Slice where ORT
  fused the producer away under another name);
* before every reader of its outputs that runs under its own name.

Values are compared with the original's at the same level, and the callers
require them bitwise equal at every level: the rewrite keeps ORT's fusions
of the original (docs/ort-anchoring.md).
"""

from __future__ import annotations

import os
import sys

import onnx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "scripts"))
from ort_session import LEVEL_NAMES, profiled_run  # noqa: E402

ANCHOR_DOC = "memplan:anchor:"  # the anchored Reshape
TOKEN_DOC = "memplan:anchor-token:"  # the nodes that build its shape


def anchored_nodes(model: onnx.ModelProto) -> list[dict]:
    """Each anchored node: what stands for it in ORT's order, its anchor's
    producer and Slice, and the readers of its outputs."""
    producer = {o: n.name for n in model.graph.node for o in n.output if o}
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for n in model.graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    # a token's Shape reads only the shape of what it anchors, which ORT may
    # fold away: not a reader of the data
    token_nodes = {n.name for n in model.graph.node if n.doc_string.startswith(TOKEN_DOC)}
    # each anchor tensor's token starts with one Slice of it
    token_slice = {n.input[0]: n.name for n in model.graph.node
                   if n.op_type == "Slice" and n.doc_string.startswith(TOKEN_DOC)}
    found = []
    for n in model.graph.node:
        if n.op_type != "Reshape" or not n.doc_string.startswith(ANCHOR_DOC):
            continue
        after = n.doc_string[len(ANCHOR_DOC):]
        subjects = [m for m in consumers.get(n.output[0], []) if not m.doc_string.startswith("memplan:anchor")]
        for s in subjects:
            swap_in = s.domain == "ai.memplan" and s.op_type == "SwapIn"
            kind = "SwapIn" if swap_in else "recompute" if s.doc_string.startswith("memplan:recompute:") else "node"
            found.append({
                "node": s.name,
                "kind": kind,
                "runs_as": n.name if swap_in else s.name,
                "anchored_by": n.name,
                "anchor": producer.get(after),
                "slice": token_slice[after],
                "readers": sorted({r.name for o in s.output if o for r in consumers.get(o, [])
                                   if r.name not in token_nodes}),
            })
    return found


def fused_position(pos: dict, name: str) -> int | None:
    """Where `name` runs in ORT's order: under its own name, or, where ORT
    fused it with a neighbour, as the fused node ORT names after it
    ("<name>/MatmulTransposeFusion/": swin_tiny's remade attention MatMul
    at EXTENDED)."""
    if name in pos:
        return pos[name]
    fused = [i for n, i in pos.items() if n.startswith(name + "/")]
    return min(fused) if fused else None


def order_problems(model: onnx.ModelProto, order: list[str]) -> tuple[int, list[str]]:
    """(anchored nodes checked, what ORT's order breaks)."""
    pos = {name: i for i, name in enumerate(order)}
    problems = []
    nodes = anchored_nodes(model)
    for a in nodes:
        me = fused_position(pos, a["runs_as"])
        if me is None and a["kind"] != "SwapIn":
            # a node ORT removed (an Identity) or fused into another under a
            # new name: the anchored input it read remains, and ORT cannot
            # have merged it into its original (no original reads that input)
            me = pos.get(a["anchored_by"])
        if me is None:
            problems.append(f"{a['kind']} {a['node']}: never runs")
            continue
        before = a["anchor"] if a["anchor"] in pos else a["slice"]
        if pos.get(before, len(order)) >= me:
            problems.append(f"{a['kind']} {a['node']}: runs at {me}, before its anchor {before}")
        late = [r for r in a["readers"] if r in pos and pos[r] < me]
        if late:
            problems.append(f"{a['kind']} {a['node']}: runs at {me}, after its reader {late[0]}")
    return len(nodes), problems


def check_all_levels(original: onnx.ModelProto, rewritten: onnx.ModelProto, feeds: dict,
                     compared: list[tuple[str, str, str]]) -> tuple[int, list[str], list[str]]:
    """At every level: each anchored node inside its interval in ORT's order;
    and the values in `compared` ((key, name in original, name in rewritten))
    against the original's at that level. Returns (anchored nodes checked over
    all levels, order problems, values that differ: "LEVEL key").

    Values that differ from BASIC on mean ORT fused the rewritten graph
    otherwise than the original (docs/ort-anchoring.md)."""
    checked, problems, differ = 0, [], []
    for level in LEVEL_NAMES:
        ref, _ = profiled_run(original, feeds, level)
        got, order = profiled_run(rewritten, feeds, level)
        n, found = order_problems(rewritten, order)
        checked += n
        problems += [f"{level}: {p}" for p in found[:5]]
        differ += [f"{level} {key}" for key, a, b in compared if ref[a].tobytes() != got[b].tobytes()]
    return checked, problems, differ
