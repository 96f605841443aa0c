"""Reads the measurement files and answers the report's questions: the
quality cells, the targets, the growth rates. No formatting here."""
import json
import math
import os

import bench_config as cfg

MEMPLAN = ["greedy", "ilp"]
BASELINES = ["chen-sqrt", "recompute-greedy", "recompute-ilp", "vdnn", "atp", "dtr"]
SOLVERS = MEMPLAN + BASELINES
# Overheads are compared to this many percentage points: the simulator's
# times are exact, this only absorbs printing/rounding of tiny overheads.
EPS_PCT = 0.005


def load(data_dir, name, default=None):
    path = os.path.join(data_dir, name)
    if not os.path.exists(path):
        return default
    with open(path) as f:
        return json.load(f)


def pct(budget_text):
    return float(budget_text.rstrip("%"))


class Quality:
    """cells[(fixture, device, budget%)][solver] = compare row."""

    def __init__(self, runs):
        self.runs = runs or []
        self.cells = {}
        self.meta = {}
        for r in self.runs:
            res = r.get("result")
            if not res:
                continue
            self.meta[(r["fixture"], r["device"])] = res
            for row in res["rows"]:
                # -0.000…: float noise of a plan as fast as the baseline.
                if abs(row.get("overhead_percent") or 0) < 1e-6 and "overhead_percent" in row:
                    row["overhead_percent"] = 0.0
                self.cells.setdefault((r["fixture"], r["device"], pct(row["budget"])), {})[row["solver"]] = row

    def fixtures(self):
        seen = []
        for r in self.runs:
            if r["fixture"] not in seen:
                seen.append(r["fixture"])
        return seen

    def row(self, fixture, device, budget, solver):
        return self.cells.get((fixture, device, budget), {}).get(solver)

    @staticmethod
    def fits(row):
        return row is not None and "error" not in row and row.get("fits") is True

    def best(self, fixture, device, budget, solvers=SOLVERS):
        """(solver, overhead) of the fitting plan with the least overhead."""
        best = None
        for s in solvers:
            r = self.row(fixture, device, budget, s)
            if self.fits(r) and (best is None or r["overhead_percent"] < best[1] - 1e-12):
                best = (s, r["overhead_percent"])
        return best


def target_heuristic_vs_ilp(q):
    """Heuristic overhead <= 1.03 x ILP overhead, per fixture x budget x device."""
    out = {"checked": 0, "met": 0, "neither": 0, "misses": []}
    for fx in q.fixtures():
        for dev in cfg.DEVICES:
            for b in cfg.BUDGETS:
                g, i = q.row(fx, dev, b, "greedy"), q.row(fx, dev, b, "ilp")
                if g is None or i is None:
                    continue
                gf, if_ = q.fits(g), q.fits(i)
                if not gf and not if_:
                    out["neither"] += 1
                    continue
                out["checked"] += 1
                if gf and not if_:
                    out["met"] += 1
                elif if_ and not gf:
                    out["misses"].append({"fixture": fx, "device": dev, "budget": b, "greedy": None,
                                          "ilp": i["overhead_percent"], "why": "heuristic does not fit"})
                elif g["overhead_percent"] <= 1.03 * i["overhead_percent"] + EPS_PCT:
                    out["met"] += 1
                else:
                    out["misses"].append({"fixture": fx, "device": dev, "budget": b,
                                          "greedy": g["overhead_percent"], "ilp": i["overhead_percent"],
                                          "why": "overhead"})
    return out


def target_best_vs_baselines(q):
    """memplan's best (greedy or ILP) <= every baseline that fits."""
    out = {"checked": 0, "met": 0, "misses": []}
    for fx in q.fixtures():
        for dev in cfg.DEVICES:
            for b in cfg.BUDGETS:
                if (fx, dev, b) not in q.cells:
                    continue
                mine = q.best(fx, dev, b, MEMPLAN)
                for base in BASELINES:
                    r = q.row(fx, dev, b, base)
                    if not q.fits(r):
                        continue
                    out["checked"] += 1
                    if mine is not None and mine[1] <= r["overhead_percent"] + EPS_PCT:
                        out["met"] += 1
                    else:
                        out["misses"].append({"fixture": fx, "device": dev, "budget": b, "baseline": base,
                                              "baseline_overhead": r["overhead_percent"],
                                              "memplan": None if mine is None else mine[1],
                                              "memplan_solver": None if mine is None else mine[0]})
    return out


def gbench_table(gb):
    """{stage: {case: row}} from Google Benchmark's JSON."""
    out = {}
    for b in (gb or {}).get("benchmarks", []):
        if b.get("run_type") != "iteration" or b.get("error_occurred"):
            continue
        name = b["name"].replace("/real_time", "").split("/iterations:")[0]
        stage, case = name.split("/", 1)
        out.setdefault(stage, {})[case] = b
    return out


def ms(b):
    unit = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b.get("time_unit", "ms")]
    return b["real_time"] * unit


def growth_exponent(points):
    """Least-squares slope of log(time) on log(size): t ~ n^k."""
    pts = [(math.log(n), math.log(t)) for n, t in points if n and t and n > 0 and t > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    if sxx == 0:
        return None
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx


def speed_rows(speed):
    """{case: {mode: row}} in the order measured."""
    out = {}
    for r in speed or []:
        out.setdefault(r["case"], {})[r["mode"]] = r
    return out
