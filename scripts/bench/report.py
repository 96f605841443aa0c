#!/usr/bin/env python3
"""Writes BENCHMARKS.md and its charts from the files run_bench.py wrote.

  report.py --data-dir D --out-md docs/BENCHMARKS.md --plot-dir docs/bench
"""
import argparse
import os

import analysis as an
import bench_config as cfg
from carried_section import read_section
import report_plots
import report_targets
import report_text

GIB = 2.0 ** 30


def fmt_bytes(b):
    if b is None:
        return "–"
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if b >= scale:
            return "%.2f %s" % (b / scale, unit)
    return "%d B" % b


def fmt_pct(v, digits=1):
    return "–" if v is None else ("%.*f %%" % (digits, v))


def cell(q, fx, dev, b, solver, best):
    r = q.row(fx, dev, b, solver)
    if r is None:
        return "·"
    if "error" in r:
        return "error"
    if not q.fits(r):
        return "✗"
    text = "%.1f" % (r["overhead_percent"] + 0.0 if abs(r["overhead_percent"]) >= 0.05 else 0.0)
    if solver in ("ilp", "recompute-ilp") or (solver == "auto" and r.get("status") != "heuristic"):
        gap = r.get("ilp_gap_percent")
        status = r.get("status", "")
        if status == "optimal":
            text += " (opt)"
        elif gap is not None:
            text += " (gap %.1f)" % gap
        elif status:
            text += " (%s)" % {"time_limit": "t/l", "feasible": "feas."}.get(status, status)
    if best is not None and best[0] == solver:
        text = "**%s**" % text
    return text


def quality_tables(q, reach):
    lines = []
    for dev in cfg.DEVICES:
        if not any(k[1] == dev for k in q.cells):
            continue
        lines += ["", "### %s" % dev, "",
                  "| fixture (dims) | budget | " + " | ".join(an.SOLVERS) + " |",
                  "|---|---|" + "---|" * len(an.SOLVERS)]
        for fx in q.fixtures():
            meta = q.meta.get((fx, dev))
            if meta is None:
                continue
            dims = " ".join("%s=%s" % kv for kv in meta["dims"].items())
            rch = (reach or {}).get(fx, {})
            smallest = rch.get("smallest_bytes")
            reach_txt = (" ≥%.0f%%" % (100.0 * smallest / meta["baseline_peak_bytes"])) if smallest else ""
            for k, b in enumerate(cfg.BUDGETS):
                best = q.best(fx, dev, b)
                label = ("%s (%s), peak %s, reach%s" % (fx, dims, fmt_bytes(meta["baseline_peak_bytes"]),
                                                       reach_txt)) if k == 0 else ""
                lines.append("| %s | %d%% | %s |" % (label, b, " | ".join(cell(q, fx, dev, b, s, best)
                                                                           for s in an.SOLVERS)))
    return lines


QUALITY_INTRO = (
    "Overhead %% = simulated iteration time of the plan (PLAN_FORMAT.md timing rules, roofline node times of the "
    "device preset) over the baseline's, minus 1; from `memplan compare --json` (every solver, each with the "
    "planner's budget tightening and the validator). `auto` = the heuristic, then the ILP warm-started from it, "
    "keeping the faster plan; its cell carries the ILP's status when the ILP's plan was kept. **Bold**: the best "
    "plan that fits. ✗: the solver's plan does not fit the budget. ILP cells: (opt) proven optimal under the "
    "model, (gap g) the relative gap to Cbc's bound when stopped, (feas.) a plan without a proven bound (e.g. the "
    "ILP coarsened the problem), otherwise its status. `reach ≥x%%`: the smallest budget memplan can reach for "
    "that fixture (all candidates evicted); below it no plan can fit. ILP time limit: %g s per solve.")


def objective_from_quality(quality_rows):
    """objective.json's rows from `compare --json`, which states each plan's
    model objective (`objective_seconds`) beside its simulated time."""
    rows = []
    for entry in quality_rows or []:
        res = entry.get("result") or {}
        for r in res.get("rows", []):
            if r.get("solver") not in cfg.OBJECTIVE_SOLVERS or "objective_seconds" not in r:
                continue
            row = {"fixture": entry["fixture"], "device": entry["device"],
                   "budget": float(str(r["budget"]).rstrip("%")), "solver": r["solver"],
                   "status": r.get("status"), "objective_seconds": None}
            if r.get("fits"):
                row["objective_seconds"] = r["objective_seconds"]
                row["predicted"] = {"iteration_seconds": r["iteration_seconds"],
                                    "baseline_iteration_seconds": res["baseline_iteration_seconds"]}
            rows.append(row)
    return rows


def load_data(d):
    gb = an.load(d, "gbench.json", {}) or {}
    quality = an.load(d, "quality.json", [])
    objective = an.load(d, "objective.json", []) or objective_from_quality(quality)
    return {"machine": an.load(d, "machine.json", {}), "q": an.Quality(quality),
            "objective": objective, "reach": an.load(d, "reach.json", {}),
            "headline": an.load(d, "headline.json", {"saved": [], "maxbatch": []}),
            "speed": an.load(d, "speed.json", []), "gb": gb, "gbt": an.gbench_table(gb)}


def node_counts(speed, gbt):
    nodes = {r["case"]: r["nodes"] for r in speed if r.get("nodes")}
    for stage in gbt.values():
        for case, b in stage.items():
            if b.get("nodes"):
                nodes.setdefault(case, int(b["nodes"]))
    return nodes


def quality_section(q, reach, machine, pareto, rel):
    L = ["", "## Plan quality", "", QUALITY_INTRO % machine.get("ilp_time_limit", 0)]
    L += quality_tables(q, reach)
    L += ["", "### Pareto plots (%s)" % cfg.PARETO_DEVICE, "",
          "Overhead vs budget on the finer grid %s %% (one line per method but `auto`; a break in a line: no plan "
          "fits there)." % ", ".join(str(b) for b in cfg.FINE_BUDGETS), ""]
    for fx, (svg, png) in pareto.items():
        L.append("[![%s](%s)](%s)" % (fx, rel(png) or rel(svg), rel(svg)))
    return L


def write_report(D, args):
    md_dir = os.path.dirname(os.path.abspath(args.out_md))
    rel = lambda path: os.path.relpath(path, md_dir) if path else None  # noqa: E731
    notes = "[%s](%s)" % ("docs/bench-notes.md", rel(NOTES))
    q, machine, gbt, speed = D["q"], D["machine"], D["gbt"], D["speed"]
    nodes = node_counts(speed, gbt)
    pareto = report_plots.pareto_plots(q, args.plot_dir)
    splots = report_plots.speed_plots(gbt, speed, args.plot_dir, nodes.get)
    skipped = D["gb"].get("skipped", [])
    results = report_targets.compute_all(q, D["objective"], D["headline"], D["reach"])
    L = report_text.header(machine, args.command, args.seconds, notes)
    L += report_targets.targets(results, an.speed_rows(speed), gbt)
    L += report_text.headline(D["headline"], q, notes)
    L += quality_section(q, D["reach"], machine, pareto, rel)
    L += report_text.speed(speed, gbt, nodes, splots, rel, machine, skipped, D["gb"].get("context"))
    L += report_text.findings(q, speed, gbt, D["headline"], skipped)
    L += report_text.method(args.command, args.seconds, machine.get("quick"))
    # Generated apart (minutes of ONNX Runtime runs; the tight-budget
    # sweep; the GPT-2 family's max batch; the stage growth at 1k-100k
    # nodes) and carried into every regenerated report.
    L += read_section("ort_peak", "ort-peak")
    L += read_section("tight_budgets", "tight-budgets")
    L += read_section("allow", "allow")
    L += read_section("maxbatch", "maxbatch")
    L += read_section("growth", "growth")
    return L


# The hand-written notes on these figures (not generated).
NOTES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "bench-notes.md")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data-dir", required=True)
    p.add_argument("--out-md", required=True)
    p.add_argument("--plot-dir", required=True)
    p.add_argument("--command", default="scripts/bench.sh")
    p.add_argument("--seconds", type=float, default=None, help="whole run time, for the header")
    args = p.parse_args()
    os.makedirs(args.plot_dir, exist_ok=True)
    L = write_report(load_data(args.data_dir), args)
    tmp = args.out_md + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(L).rstrip() + "\n")
    os.replace(tmp, args.out_md)


if __name__ == "__main__":
    main()
