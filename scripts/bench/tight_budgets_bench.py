#!/usr/bin/env python3
"""Tight budgets (issue 15): overhead against budget down to the reachable
floor, memplan's solvers next to the recompute-only baselines, and the
known optimum where there is one.

  scripts/bench/tight_budgets_bench.py [--memplan build/cli/memplan]
      [--only chains|fixtures] [--time-limit 5]

Part 1, uniform chains (64, 32 and 16 Sigmoid steps of 4 MiB, a backward
that reads the states last first, a100-40gb, recompute only): recomputations
per solver (checkmate: Checkmate's MILP, up to 100 nodes) at budgets of S
states, next to revolve's optimum for S-3 and S-4
checkpoints (Griewank's binomial formula; 3-4 of the budget's states are
the backward's own working set). Part 2, every fixture of the benchmark on
a100-40gb: `memplan compare` at budgets from 40 % down to the floor that
`plan` reports. Writes docs/bench/tight_budgets.md and the same text into
docs/BENCHMARKS.md between its markers. Stdlib + onnx (the chains).
"""
import argparse
import json
import math
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import bench_config as cfg  # noqa: E402
from carried_section import write_section  # noqa: E402
from chain_model import chain_model  # noqa: E402
from run_bench import SMALLEST, dim_args, run  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEVICE = cfg.PARETO_DEVICE
STATE_FLOATS = 1 << 20  # 4 MiB
CHAINS = {64: [32, 24, 16, 12, 10, 8, 6, 5], 32: [16, 12, 10, 8, 7, 6, 5], 16: [10, 8, 7, 6, 5]}
CHAIN_SOLVERS = ["auto", "recompute-greedy", "recompute-ilp", "chen-sqrt", "checkmate"]
FIXTURE_BUDGETS = [40, 35, 30, 25, 20, 15, 10, 5]
FIXTURE_SOLVERS = ["auto", "greedy", "ilp", "recompute-greedy", "recompute-ilp", "chen-sqrt"]


def revolve_recomputes(l, s):
    """Griewank: reversing l steps with s checkpoints takes p(l, s) = r*l -
    C(s+r, s+1) forward steps, r minimal with C(s+r, s) >= l; minus the l
    of the forward itself."""
    if s < 1:
        return None
    r = 0
    while math.comb(s + r, s) < l:
        r += 1
    return r * l - math.comb(s + r, s + 1) - l


def plan_cmd(memplan, model, dims, budget, solver, out, *more):
    return [memplan, "plan", model, *dim_args(dims), "--device", DEVICE, "--budget", str(budget),
            "--solver", solver, *more, "--no-rewrite", "-q", "-o", out]


def plan_json(memplan, model, budget, solver, allow, time_limit, dims=()):
    with tempfile.TemporaryDirectory() as tmp:
        cmd = plan_cmd(memplan, model, dims, budget, solver, tmp, "--allow", allow, "--time-limit",
                       str(time_limit))
        rc, _, err, secs = run(cmd, timeout=900)
        if rc != 0:
            return None, secs
        with open(os.path.join(tmp, "plan.json")) as f:
            return json.load(f), secs


def table_head(title, text, columns):
    return ["### " + title, "", text, "", "| " + " | ".join(columns) + " |",
            "|" + "---|" * len(columns)]


def chains(args):
    lines = table_head("Uniform chains (a100-40gb, recompute only)",
                       "Recomputations of each solver's plan (— : no plan fits); the budget is S states of "
                       "4 MiB plus 1 MiB. revolve: Griewank's optimum with S−3 and S−4 checkpoints. Ratio: "
                       "memplan's best over revolve with S−4.",
                       ["chain", "S", *CHAIN_SOLVERS, "revolve S−3", "revolve S−4", "best / revolve S−4"])
    with tempfile.TemporaryDirectory() as work:
        for steps, budgets in CHAINS.items():
            model = os.path.join(work, f"chain{steps}.onnx")
            chain_model(steps, STATE_FLOATS, model)
            for s in budgets:
                budget = s * 4 * 2**20 + 2**20
                counts = []
                for solver in CHAIN_SOLVERS:
                    plan, secs = plan_json(args.memplan, model, budget, solver, "recompute", args.time_limit)
                    counts.append(None if plan is None else
                                  sum(1 for st in plan["schedule"] if st["op"] == "recompute"))
                    print(f"chain {steps} S={s} {solver}: {counts[-1]} ({secs:.1f} s)", file=sys.stderr)
                r3, r4 = revolve_recomputes(steps, s - 3), revolve_recomputes(steps, s - 4)
                fit = [c for c in counts if c is not None]
                ratio = "%.2f" % (min(fit) / r4) if fit and r4 else "—"
                cells = ["—" if c is None else str(c) for c in counts]
                lines.append(f"| {steps} | {s} | " + " | ".join(cells) +
                             f" | {r3 if r3 is not None else '—'} | {r4 if r4 is not None else '—'} | {ratio} |")
    return lines + [""]


def floor_pct(memplan, fx):
    with tempfile.TemporaryDirectory() as tmp:
        _, _, err, _ = run(plan_cmd(memplan, fx["path"], fx["dims"], "1%", "greedy", tmp), timeout=900)
    m = SMALLEST.search(err)
    rc, out, _, _ = run([memplan, "inspect", fx["path"], *dim_args(fx["dims"]), "--device", DEVICE,
                         "--json"], timeout=900)
    if not m or rc != 0:
        return None
    return 100.0 * int(m.group(1)) / json.loads(out)["baseline_peak"]["bytes"]


def fixtures(args):
    lines = table_head("Fixtures (a100-40gb, `memplan compare`)",
                       "Overhead % of each solver's plan at budgets from 40 % of the baseline peak down to "
                       "the floor (the smallest budget memplan can reach, all candidates evicted; its first "
                       "budget above is the last row). **Bold**: the best that fits; ✗: no plan fits.",
                       ["fixture", "floor", "budget", *FIXTURE_SOLVERS])
    for fx in cfg.fixtures(os.path.join(ROOT, "tests/fixtures"), False):
        floor = floor_pct(args.memplan, fx)
        if floor is None:
            lines.append(f"| {fx['name']} | ? | | " + " | ".join("" for _ in FIXTURE_SOLVERS) + " |")
            continue
        budgets = [b for b in FIXTURE_BUDGETS if b >= floor]
        edge = math.ceil(floor)
        if edge not in budgets and edge <= 100:
            budgets.append(edge)
        if not budgets:
            continue
        cmd = [args.memplan, "compare", fx["path"], *dim_args(fx["dims"]), "--device", DEVICE,
               "--budgets", ",".join("%g%%" % b for b in budgets), "--solvers", ",".join(FIXTURE_SOLVERS),
               "--time-limit", str(args.time_limit), "--json"]
        rc, out, err, secs = run(cmd, timeout=3600)
        print(f"compare {fx['name']}: rc {rc}, {secs:.0f} s", file=sys.stderr)
        if rc != 0:
            lines.append(f"| {fx['name']} | {floor:.1f} % | compare failed: {err.strip()[-120:]} |")
            continue
        cells = {}
        for row in json.loads(out)["rows"]:
            cells.setdefault(row["budget"], {})[row["solver"]] = row
        for i, b in enumerate(budgets):
            by = cells.get("%g%%" % b, {})
            fit = {s: r["overhead_percent"] for s, r in by.items() if r.get("fits") is True}
            best = min(fit.values()) if fit else None
            out_cells = []
            for s in FIXTURE_SOLVERS:
                if s not in fit:
                    out_cells.append("✗")
                    continue
                text = "%.1f" % fit[s]
                out_cells.append(f"**{text}**" if abs(fit[s] - best) < 1e-9 else text)
            head = f"{fx['name']} | {floor:.1f} %" if i == 0 else " | "
            lines.append(f"| {head} | {b:g} % | " + " | ".join(out_cells) + " |")
    return lines + [""]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--memplan", default=os.path.join(ROOT, "build/cli/memplan"))
    p.add_argument("--only", choices=["chains", "fixtures"])
    p.add_argument("--time-limit", type=float, default=cfg.ILP_TIME_LIMIT)
    args = p.parse_args()
    start = time.time()
    body = []
    if args.only != "fixtures":
        body += chains(args)
    if args.only != "chains":
        body += fixtures(args)
    text = "\n".join(["## Tight budgets (issue 15)", "",
                      "Generated by `scripts/bench/tight_budgets_bench.py` in %.0f s on %d cores, ILP time limit "
                      "%g s. The exact optimum on small DAGs (Checkmate's MILP, equal to an enumeration) is in "
                      "the tests: `RematOptimum.*` prints it next to memplan's plans." %
                      (time.time() - start, os.cpu_count(), args.time_limit), ""] + body)
    write_section("tight_budgets", "tight-budgets", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
