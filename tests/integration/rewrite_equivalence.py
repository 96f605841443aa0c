#!/usr/bin/env python3
"""The rewritten training graph computes exactly what the original computes.

For each tiny fixture with real weights (scripts/fixtures/make_fixtures.py
--with-weights: mlp, mlp_dropout, resnet_tiny, bert_tiny, gpt2_tiny) and each
solver (greedy, ilp, chen-sqrt, vdnn): `memplan plan` at 50 % of the baseline
peak (the next of 60/70/80/90 % where a solver cannot reach it, reported),
which writes model.memplan.onnx; then one training step of the original and
of the rewritten graph in ONNX Runtime on the same inputs. The loss and every
gradient must be bitwise equal. For the greedy and chen-sqrt plans, both
models also run at each of ORT's four optimisation levels with its profiler
on: every anchored reload and recompute must run after its anchor and before
its readers in ORT's actual order (tests/integration/ort_order.py), and the
loss and gradients must be bitwise equal to the original's at each level.

How it is compared:
* Gradients: the training graph's outputs are InPlaceAccumulatorV2's bool
  "updated" flags, so in both models the tensor each accumulator adds (its
  second input, `<param>_grad`, or its reloaded copy in the rewrite) is made
  an extra graph output, keyed by the accumulator's output name. That compares
  exactly what each graph accumulates, without IO binding.
* Both sessions run with graph optimisations off (so ORT cannot merge a
  recompute clone back into its original by common-subexpression elimination,
  and the rewritten graph runs as written), one thread (reductions in a fixed
  order), the CPU provider.
* Dropout: memplan never recomputes it (the plan is made on the graph as
  ORT wrote it, without seeds), but ORT draws an unseeded Dropout's mask from
  a process-wide generator, so two sessions get different masks. Each Dropout
  node gets the same `seed` attribute, by node name, in both models before
  running; the kernel then draws from its own generator seeded by it.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import helper, numpy_helper

import ort_order

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# dims per fixture: activations large enough that 50 % of the baseline peak
# can be reached (the MLPs never can: their peak is mostly parameters and
# gradients), small enough that a case takes about a second
FIXTURES = {
    "mlp": {"batch": 8},
    "mlp_dropout": {"batch": 8},
    "resnet_tiny": {"batch": 64},
    "bert_tiny": {"batch": 8, "seq": 128},
    "gpt2_tiny": {"batch": 8, "seq": 128},
}
SOLVERS = ["greedy", "ilp", "chen-sqrt", "vdnn"]
# whose plans are also run in ORT's own order at every optimisation level
# (tests/integration/ort_order.py): swaps and recomputes, recomputes only
ORDER_CHECKED = ["greedy", "chen-sqrt"]
# "budget 3.22 MiB (3381068 B) cannot be met: … the smallest budget memplan
# can reach is 5.94 MiB (6224502 B)"
BUDGET = re.compile(r"^memplan: error: budget [^(]*\((\d+) B\)")
REACHABLE = re.compile(r"smallest budget memplan can reach is [^(]*\((\d+) B\)")
EXIT_INFEASIBLE = 3
# integer inputs: exclusive upper bound of their values (vocab 1000, 10 classes)
INT_RANGES = {"labels": 10, "input_ids": 1000, "lm_labels": 1000, "token_type_ids": 2, "attention_mask": 2}


def generate_fixtures(out: str) -> None:
    cmd = [sys.executable, os.path.join(REPO, "scripts/fixtures/make_fixtures.py"), "--with-weights", "--out", out]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def allow_args(solver: str) -> list:
    """A recompute-only solver is told so, so that the floor memplan reports
    is one it can reach (swaps of activations and training state aside)."""
    return ["--allow", "recompute"] if solver.startswith("recompute") else []


def plan(memplan: str, model: str, dims: dict, solver: str, out: str) -> str | None:
    """Runs `memplan plan` at 50 % of the baseline peak or, where the solver
    cannot reach that, at the next budget up that it can: from the smallest
    memplan says it can reach, then in steps of 5 % of the baseline peak.
    Returns the budget used, as a share of the baseline peak."""
    dim_args = [a for k, v in dims.items() for a in ("--dim", f"{k}={v}")]
    budgets, baseline = ["50%"], None
    while budgets:
        budget = budgets.pop(0)
        r = subprocess.run([memplan, "plan", model, *dim_args, "--budget", budget, "--solver", solver,
                            *allow_args(solver), "--state-on-host", "never",  # ONNX cannot say it
                            "--time-limit", "20", "-q", "-o", out], capture_output=True, text=True)
        if r.returncode == 0:
            return budget if baseline is None else f"{100 * int(budget) / baseline:.0f}%"
        if r.returncode != EXIT_INFEASIBLE:
            raise RuntimeError(f"memplan plan {solver} {budget} failed ({r.returncode}): {r.stderr.strip()}")
        if baseline is None:
            baseline = 2 * int(BUDGET.search(r.stderr).group(1))
            reachable = int(REACHABLE.search(r.stderr).group(1))
            steps = {int(reachable * f) for f in (1.0, 1.05, 1.1)}
            steps |= {baseline * p // 100 for p in range(55, 101, 5)}
            budgets = [str(b) for b in sorted(steps) if b >= reachable]
    return None


def expose_gradients(model: onnx.ModelProto) -> None:
    """Adds, as graph outputs, what each InPlaceAccumulatorV2 accumulates."""
    g = model.graph
    inputs = {v.name: v for v in g.input}
    producer = {o: n for n in g.node for o in n.output}
    outputs = {o.name for o in model.graph.output}

    def source(name):
        # The buffer may be read through SwapIn(SwapOut(buffer)) (offloaded
        # state): back to the graph input it copies.
        while name not in inputs and name in producer and producer[name].input:
            name = producer[name].input[0]
        return inputs[name]

    for node in model.graph.node:
        if node.op_type != "InPlaceAccumulatorV2":
            continue
        grad = node.input[1]
        if grad in outputs:
            continue
        buffer_type = source(node.input[0]).type.tensor_type.elem_type
        model.graph.output.append(helper.make_tensor_value_info(grad, buffer_type, None))
        outputs.add(grad)


def accumulated(model: onnx.ModelProto) -> dict:
    """accumulator output name -> name of the tensor it adds."""
    return {n.output[0]: n.input[1] for n in model.graph.node if n.op_type == "InPlaceAccumulatorV2"}


def seed_dropouts(model: onnx.ModelProto, seeds: dict) -> None:
    for node in model.graph.node:
        if node.op_type == "Dropout":
            del node.attribute[:]  # Dropout has no other attribute
            node.attribute.append(helper.make_attribute("seed", seeds[node.name]))


def make_feeds(model: onnx.ModelProto, weights: dict, dims: dict, rng) -> dict:
    feeds = {}
    for v in model.graph.input:
        t = v.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else dims[d.dim_param] for d in t.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)
        if v.name in weights:
            feeds[v.name] = weights[v.name]
        elif v.name.endswith("_grad.accumulation.buffer"):
            feeds[v.name] = np.zeros(shape, dtype)
        elif v.name == "lazy_reset_grad":
            feeds[v.name] = np.array([True])
        elif np.issubdtype(dtype, np.integer):
            feeds[v.name] = rng.integers(0, INT_RANGES.get(v.name, 2), size=shape).astype(dtype)
        else:
            feeds[v.name] = rng.standard_normal(shape).astype(dtype)
    return feeds


def run(model: onnx.ModelProto, feeds: dict) -> dict:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds)))


def bitwise_equal(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def checker_verdict(model: onnx.ModelProto) -> str:
    try:
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as e:
        return str(e).splitlines()[0]
    return "ok"


def count_new_nodes(model: onnx.ModelProto) -> tuple[int, int, int]:
    swap_out = sum(n.domain == "ai.memplan" and n.op_type == "SwapOut" for n in model.graph.node)
    swap_in = sum(n.domain == "ai.memplan" and n.op_type == "SwapIn" for n in model.graph.node)
    recompute = sum(n.doc_string.startswith("memplan:recompute:") for n in model.graph.node)
    return swap_out, swap_in, recompute


def count_dropout_recomputes(model: onnx.ModelProto) -> int:
    """Dropout outputs remade from their masks (DropoutGrad clones)."""
    return sum(n.doc_string.startswith("memplan:recompute:") and n.op_type == "DropoutGrad"
               for n in model.graph.node)


def check_case(memplan, name, fdir, dims, solver, work, failures) -> tuple | None:
    model_path = os.path.join(fdir, "training_model.stripped.onnx")
    out = os.path.join(work, f"{name}-{solver}")
    budget = plan(memplan, model_path, dims, solver, out)
    if budget is None:
        failures.append(f"{name} {solver}: no plan fits any budget up to the baseline peak")
        return None
    rewritten_path = os.path.join(out, "model.memplan.onnx")

    # `rewrite` of the same plan gives the same bytes as `plan` wrote.
    again = os.path.join(out, "again.onnx")
    subprocess.run([memplan, "rewrite", model_path, "--plan", os.path.join(out, "plan.json"), "-o", again, "-q"],
                   check=True)
    if open(again, "rb").read() != open(rewritten_path, "rb").read():
        failures.append(f"{name} {solver}: `memplan rewrite` and `memplan plan` wrote different models")

    original = onnx.load(model_path)
    rewritten = onnx.load(rewritten_path)
    # PyPI's onnx checker too (newer than Debian's the C++ tests use): the
    # rewrite passes wherever the original does (resnet_tiny's MaxPoolGrad,
    # which ORT puts in the default domain, fails both).
    if checker_verdict(rewritten) != checker_verdict(original):
        failures.append(f"{name} {solver}: onnx.checker: {checker_verdict(rewritten)}")
    weights = {t.name: numpy_helper.to_array(t) for t in onnx.load(os.path.join(fdir, "forward_model.onnx")).graph.initializer}
    seeds = {n.name: 1000 + i for i, n in enumerate(original.graph.node) if n.op_type == "Dropout"}
    for m in (original, rewritten):
        seed_dropouts(m, seeds)
        expose_gradients(m)
    feeds = make_feeds(original, weights, dims, np.random.default_rng(20240501))

    t0 = time.perf_counter()
    ref = run(original, feeds)
    got = run(rewritten, feeds)
    secs = time.perf_counter() - t0

    loss = original.graph.output[0].name
    compared = [(loss, loss, loss)]
    ref_acc, got_acc = accumulated(original), accumulated(rewritten)
    for out_name, grad in ref_acc.items():
        compared.append((out_name, grad, got_acc[out_name]))
    bad = [key for key, a, b in compared if not bitwise_equal(ref[a], got[b])]
    if bad:
        failures.append(f"{name} {solver}: {len(bad)} of {len(compared)} values differ, e.g. {bad[:3]}")
    # In ORT's own order, at every optimisation level: each reload and
    # recompute between its anchor and its reader, values still bitwise equal.
    ordered = 0
    if solver in ORDER_CHECKED:
        ordered, problems, differ = ort_order.check_all_levels(original, rewritten, feeds, compared)
        failures += [f"{name} {solver}: {p}" for p in problems]
        failures += [f"{name} {solver}: {d} differs from the original's at that level" for d in differ]
    sw_out, sw_in, rec = count_new_nodes(rewritten)
    return (name, solver, budget, len(original.graph.node), len(rewritten.graph.node), sw_out, sw_in, rec,
            len(compared), not bad, secs, float(ref[loss]), count_dropout_recomputes(rewritten), ordered)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memplan", required=True, help="the memplan binary")
    ap.add_argument("--only", nargs="+", choices=list(FIXTURES), help="fixtures to check (default: all)")
    ap.add_argument("--keep", help="keep the work directory here")
    args = ap.parse_args()

    sys.path.insert(0, os.path.join(REPO, "scripts/fixtures"))
    import ort_compat

    ort_compat.quiet_ort()
    work = args.keep or tempfile.mkdtemp(prefix="memplan-equiv-")
    failures: list[str] = []
    rows = []
    try:
        t0 = time.perf_counter()
        generate_fixtures(os.path.join(work, "fixtures"))
        print(f"fixtures generated in {time.perf_counter() - t0:.1f} s", flush=True)
        for name in args.only or list(FIXTURES):
            for solver in SOLVERS:
                row = check_case(args.memplan, name, os.path.join(work, "fixtures", name), FIXTURES[name], solver,
                                 work, failures)
                if row:
                    rows.append(row)
                    print("  ".join(str(x) for x in row[:10]), flush=True)
        # Dropout outputs remade from their masks must be among what is
        # compared bitwise, or that path would be untested.
        if not args.only and sum(r[12] for r in rows) == 0:
            failures.append("no plan recomputes a Dropout from its mask (DropoutGrad clone)")
        print(f"Dropout outputs remade from their masks: {sum(r[12] for r in rows)}")
        # Every fixture's order check must have checked some anchored node.
        for name in args.only or list(FIXTURES):
            if not any(r[0] == name and r[13] > 0 for r in rows):
                failures.append(f"{name}: no reload or recompute was checked in ORT's order")
        print(f"anchored reloads and recomputes checked in ORT's order (4 levels): {sum(r[13] for r in rows)}")
        # A fixture where no plan evicts anything would prove nothing.
        for name in args.only or list(FIXTURES):
            if not any(r[0] == name and sum(r[5:8]) > 0 for r in rows):
                failures.append(f"{name}: no plan swaps or recomputes anything")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    print("\n| fixture | solver | budget | nodes | rewritten | SwapOut | SwapIn | recompute | values | bitwise equal |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {r[5]} | {r[6]} | {r[7]} | {r[8]} | "
              f"{'yes' if r[9] else 'NO'} |")
    for f in failures:
        print("FAIL:", f)
    passed = sum(1 for r in rows if r[9])
    print(f"{passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
