"""Reads the measurement files and answers the report's questions: the
quality cells, the targets, the growth rates. No formatting here."""
import json
import math
import os

import bench_config as cfg

MEMPLAN = cfg.MEMPLAN_SOLVERS
BASELINES = cfg.BASELINE_SOLVERS
SOLVERS = MEMPLAN + BASELINES
PLOT_SOLVERS = [s for s in SOLVERS if s != "auto"]  # auto draws over greedy or ILP
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


# Issue #13's targets over the quality grid.
TOL_PT = 0.5  # points of overhead a target allows
PROVEN_GAP_PCT = 1.0  # an ILP plan counts as proven within this gap (or status optimal)
GREEDY_FACTOR = 1.03
GREEDY_SHARE = 0.95  # of the cells where both fit
SAVED_TARGET_PCT = 40  # activation memory saved at <= SAVED_OVERHEAD_PCT
SAVED_TARGET_PREFIXES = ("bert", "gpt2")
COST_CELL = ("gpt2_small", "a100-40gb", 40)
COST_TARGET_PCT = 35


def grid_cells(q):
    """The cells of the quality tables that were measured: fixture x device x
    budget of cfg.BUDGETS (the Pareto device's finer budgets left out)."""
    return [(fx, dev, b) for fx in q.fixtures() for dev in cfg.DEVICES for b in cfg.BUDGETS
            if (fx, dev, b) in q.cells]


def _result(checked=0, met=0, misses=None, **extra):
    out = {"checked": checked, "met": met, "misses": misses or []}
    out.update(extra)
    return out


def model_overhead(r):
    """(model overhead %, simulated overhead %) of one objective.json row:
    the solver's objective (seconds over the baseline, under docs/model.md)
    and the simulated iteration, both over the baseline iteration."""
    p = r["predicted"]
    base = p["baseline_iteration_seconds"]
    return 100.0 * r["objective_seconds"] / base, 100.0 * (p["iteration_seconds"] / base - 1.0)


def target_model_vs_sim(objective_rows):
    """(a) |model objective - simulated overhead| <= TOL_PT for every greedy
    and ILP plan that fits (plan.json written: exit 0)."""
    out = _result(nofit=0, worst=None)
    for r in objective_rows or []:
        if r.get("objective_seconds") is None:
            out["nofit"] += 1
            continue
        model, sim = model_overhead(r)
        out["checked"] += 1
        miss = dict(r, model=model, sim=sim, diff=model - sim)
        if out["worst"] is None or abs(miss["diff"]) > abs(out["worst"]["diff"]):
            out["worst"] = miss
        if abs(model - sim) <= TOL_PT:
            out["met"] += 1
        else:
            out["misses"].append(miss)
    return out


def proven(row):
    """An ILP row whose plan is proven optimal or within PROVEN_GAP_PCT."""
    gap = row.get("ilp_gap_percent")
    return row.get("status") == "optimal" or (gap is not None and gap <= PROVEN_GAP_PCT)


def target_proven_ilp(q):
    """(b) A proven ILP plan never simulates worse than greedy's by > TOL_PT."""
    out = _result()
    for fx, dev, b in grid_cells(q):
        g, i = q.row(fx, dev, b, "greedy"), q.row(fx, dev, b, "ilp")
        if not q.fits(i) or not proven(i):
            continue
        out["checked"] += 1
        if not q.fits(g) or i["overhead_percent"] <= g["overhead_percent"] + TOL_PT + EPS_PCT:
            out["met"] += 1
        else:
            out["misses"].append({"fixture": fx, "device": dev, "budget": b, "ilp": i, "greedy": g})
    return out


def target_greedy_vs_ilp(q):
    """(c) greedy <= GREEDY_FACTOR x ILP + TOL_PT in >= GREEDY_SHARE of the
    cells where both fit."""
    out = _result(only_ilp=0, only_greedy=0)
    for fx, dev, b in grid_cells(q):
        g, i = q.row(fx, dev, b, "greedy"), q.row(fx, dev, b, "ilp")
        if q.fits(g) != q.fits(i):
            out["only_ilp" if q.fits(i) else "only_greedy"] += 1
        if not (q.fits(g) and q.fits(i)):
            continue
        out["checked"] += 1
        if g["overhead_percent"] <= GREEDY_FACTOR * i["overhead_percent"] + TOL_PT + EPS_PCT:
            out["met"] += 1
        else:
            out["misses"].append({"fixture": fx, "device": dev, "budget": b, "greedy": g["overhead_percent"],
                                  "ilp": i["overhead_percent"]})
    return out


def target_best_vs_baselines(q):
    """(d) memplan's best (greedy, ILP or auto) <= every baseline that fits,
    per cell; misses per baseline plan."""
    out = _result(plans=0)
    for fx, dev, b in grid_cells(q):
        fitting = [(base, r) for base in BASELINES for r in [q.row(fx, dev, b, base)] if q.fits(r)]
        if not fitting:
            continue
        mine = q.best(fx, dev, b, MEMPLAN)
        beaten = [{"fixture": fx, "device": dev, "budget": b, "baseline": base,
                   "baseline_overhead": r["overhead_percent"],
                   "memplan": None if mine is None else mine[1],
                   "memplan_solver": None if mine is None else mine[0]}
                  for base, r in fitting if mine is None or mine[1] > r["overhead_percent"] + EPS_PCT]
        out["checked"] += 1
        out["plans"] += len(fitting)
        out["met"] += not beaten
        out["misses"] += beaten
    return out


def target_saved(headline, q, reach):
    """(e) activation memory saved at <= cfg.SAVED_OVERHEAD_PCT, per BERT and
    GPT-2 fixture: the headline's bisection (the heuristic), and the same
    read off the quality grid on the Pareto device (memplan's best)."""
    by_fx = {s["fixture"]: s for s in (headline or {}).get("saved", [])}
    rows = []
    for fx in q.fixtures() + [f for f in by_fx if f not in q.fixtures()]:
        if not fx.startswith(SAVED_TARGET_PREFIXES):
            continue
        s = by_fx.get(fx, {})
        act = s.get("activation_at_peak") or (reach or {}).get(fx, {}).get("peak_by_class", {}).get("activation")
        bis = None if s.get("saved_of_activation") is None else 100.0 * s["saved_of_activation"]
        grid = grid_saved(q, fx, act)
        value = bis if bis is not None else grid
        rows.append({"fixture": fx, "bisection": bis, "grid": grid, "value": value,
                     "ok": value is not None and value >= SAVED_TARGET_PCT})
    judged = [r for r in rows if r["value"] is not None]
    return _result(len(judged), sum(r["ok"] for r in judged), [r for r in judged if not r["ok"]], rows=rows)


def grid_saved(q, fx, act):
    """% of the activations at the baseline peak that memplan's best plan
    within cfg.SAVED_OVERHEAD_PCT saves, over the Pareto device's budgets."""
    meta = q.meta.get((fx, cfg.PARETO_DEVICE))
    if not act or not meta:
        return None
    peaks = [r["peak_bytes"] for b in cfg.FINE_BUDGETS for s in MEMPLAN
             for r in [q.row(fx, cfg.PARETO_DEVICE, b, s)]
             if q.fits(r) and r["overhead_percent"] <= cfg.SAVED_OVERHEAD_PCT + EPS_PCT]
    if not peaks:
        return 0.0
    return 100.0 * (meta["baseline_peak_bytes"] - min(peaks)) / act


def target_cost_cell(q):
    """(f) memplan's best plan at COST_CELL costs <= COST_TARGET_PCT."""
    fx, dev, b = COST_CELL
    if (fx, dev, b) not in q.cells:
        return _result(best=None)
    best = q.best(fx, dev, b, MEMPLAN)
    ok = best is not None and best[1] <= COST_TARGET_PCT + EPS_PCT
    miss = [] if ok else [{"fixture": fx, "device": dev, "budget": b, "best": best}]
    return _result(1, int(ok), miss, best=best)


def target_monotone(q):
    """(g) per fixture x device x memplan solver, over every budget measured
    (the Pareto device's finer grid included): no budget fails while a lower
    one fits."""
    out = _result(budgets=0)
    for fx in q.fixtures():
        for dev in cfg.DEVICES:
            budgets = sorted(b for (f, d, b) in q.cells if f == fx and d == dev)
            for s in MEMPLAN:
                rows = [(b, q.row(fx, dev, b, s)) for b in budgets]
                rows = [(b, q.fits(r)) for b, r in rows if r is not None]
                if not rows:
                    continue
                out["checked"] += 1
                out["budgets"] += len(rows)
                bad = _monotone_breaks(rows)
                out["met"] += not bad
                out["misses"] += [{"fixture": fx, "device": dev, "solver": s, "budget": hi, "lower": lo}
                                  for hi, lo in bad]
    return out


def _monotone_breaks(rows):
    """(failing budget, the largest lower budget that fits) pairs of a
    series [(budget, fits)] sorted by budget."""
    bad, lowest_fit = [], None
    for b, fits in rows:
        if fits:
            lowest_fit = b
        elif lowest_fit is not None:
            bad.append((b, lowest_fit))
    return bad


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
