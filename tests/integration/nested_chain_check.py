#!/usr/bin/env python3
"""A plan that recomputes one node several times runs as planned.

A uniform chain x0 -> x1 -> ... -> x32 (Sigmoid) with a backward reading the
states last first is planned recompute-only at budgets of 8 and 6 states,
where memplan's scheduler nests remakes (docs/scheduling.md, rule 7): states
are freed and recomputed again. A 10-step chain at 5 states is planned by
`--solver checkmate`, whose MILP chooses every run. For each plan:
* at least one node is recomputed twice or more, and a state is freed
  between two of its remakes;
* `memplan validate` accepts it and `memplan run` (host backend) reports zero
  integrity errors;
* the rewritten model (several clones of one node, each anchored) gives the
  original's outputs bit for bit in ONNX Runtime at DISABLE_ALL and ALL.
Prints "N passed, M failed".
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                                "fixtures"))
from chain_model import chain_model  # noqa: E402

STEPS = 32
FLOATS = 1 << 16


def run_model(path: str, x: np.ndarray, level) -> list:
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.intra_op_num_threads = 1
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"]).run(None, {"x0": x})


def freed_between_remakes(plan: dict, node_of: dict) -> bool:
    state = collections.defaultdict(int)  # tensor -> 0 none, 1 remade, 2 freed after, 3 remade again
    for step in plan["schedule"]:
        if step["op"] == "recompute":
            t = node_of[step["node"]]
            state[t] = 3 if state[t] == 2 else max(state[t], 1)
        elif step["op"] == "free" and state[step["tensor"]] == 1:
            state[step["tensor"]] = 2
    return any(v == 3 for v in state.values())


def check(memplan: str, work: str, model: str, steps: int, states: int, solver: str) -> list[str]:
    out = os.path.join(work, f"{steps}-{states}-{solver}")
    budget = states * FLOATS * 4 + 1024  # the layout aligns the scalar loss to 256 B
    subprocess.run([memplan, "plan", model, "--budget", str(budget), "--allow", "recompute",
                    "--solver", solver, "--time-limit", "30", "-o", out, "-q"], check=True)
    plan_path = os.path.join(out, "plan.json")
    with open(plan_path, encoding="utf-8") as f:
        plan = json.load(f)
    problems = []
    remakes = collections.Counter(s["node"] for s in plan["schedule"] if s["op"] == "recompute")
    if not remakes or max(remakes.values()) < 2:
        problems.append("no node recomputed twice")
    if not freed_between_remakes(plan, {f"f{i}": f"x{i}" for i in range(1, steps + 1)}):
        problems.append("no state freed between two remakes")
    if subprocess.run([memplan, "validate", model, plan_path], capture_output=True).returncode != 0:
        problems.append("validate refused the plan")
    run = subprocess.run([memplan, "run", model, "--plan", plan_path], capture_output=True, text=True)
    if run.returncode != 0 or " 0 error(s)" not in run.stdout:
        problems.append("run: " + (run.stdout + run.stderr).strip().splitlines()[-1])
    rewritten = os.path.join(out, "model.memplan.onnx")
    clones = sum(1 for n in onnx.load(rewritten).graph.node if n.op_type == "Sigmoid") - steps
    x = np.random.RandomState(states).randn(FLOATS).astype(np.float32)
    for level in (ort.GraphOptimizationLevel.ORT_DISABLE_ALL, ort.GraphOptimizationLevel.ORT_ENABLE_ALL):
        ref, got = run_model(model, x, level), run_model(rewritten, x, level)
        if not all(np.array_equal(a, b) for a, b in zip(ref, got)):
            problems.append(f"outputs differ at {level}")
    print(f"{steps} steps, {states} states, {solver}: {sum(remakes.values())} recomputes, {clones} clones, "
          f"most of one node {max(remakes.values(), default=0)}: {'ok' if not problems else problems}")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memplan", required=True)
    args = ap.parse_args()
    passed = failed = 0
    with tempfile.TemporaryDirectory() as work:
        for steps, states, solver in ((STEPS, 8, "auto"), (STEPS, 6, "auto"), (10, 5, "checkmate")):
            model = os.path.join(work, f"chain{steps}.onnx")
            if not os.path.exists(model):
                chain_model(steps, FLOATS, model)
            if check(args.memplan, work, model, steps, states, solver):
                failed += 1
            else:
                passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
