"""The report's charts: a Pareto plot per model (overhead vs budget, one
line per method) and the speed charts (time and RSS vs graph size)."""
import os

import analysis as an
import bench_config as cfg
import svgplot

Y_CAP_PCT = 100  # overheads above are drawn clipped at the top


def pareto_plots(q, plot_dir):
    """One chart per fixture on the Pareto device; returns {fixture: (svg, png)}."""
    out = {}
    for fx in q.fixtures():
        series = []
        any_fit = False
        for s in an.PLOT_SOLVERS:
            pts = []
            for b in cfg.FINE_BUDGETS:
                r = q.row(fx, cfg.PARETO_DEVICE, b, s)
                if r is None:
                    continue
                if q.fits(r):
                    pts.append((b, max(0.0, r["overhead_percent"])))
                    any_fit = True
                else:
                    pts.append((None, None))  # breaks the line: no plan fits here
            series.append((s, pts))
        meta = q.meta.get((fx, cfg.PARETO_DEVICE), {})
        dims = " ".join("%s=%s" % kv for kv in meta.get("dims", {}).items())
        svg = os.path.join(plot_dir, "pareto_%s.svg" % fx)
        note = ("only plans that fit the budget are drawn; open circles: overhead above %d%%"
                % Y_CAP_PCT) if any_fit else "no method fits any of these budgets"
        svgplot.line_chart(
            svg, "%s (%s) on %s: overhead vs budget" % (fx, dims, cfg.PARETO_DEVICE), series,
            svgplot.Axis(min(cfg.FINE_BUDGETS), max(cfg.FINE_BUDGETS), label="budget, % of the baseline peak",
                         reverse=True),
            svgplot.Axis(0, Y_CAP_PCT, label="overhead, % of the baseline iteration"), note=note)
        out[fx] = (svg, svgplot.png_copy(svg))
    return out


def speed_plots(gb_table, speed, plot_dir, nodes_of):
    """Stage times (Google Benchmark) and whole runs vs nodes, log-log."""
    out = {}
    stages = ["load", "analysis", "planning_order", "problem", "greedy", "ilp", "schedule", "simulate",
              "validate", "plan_json", "rewrite", "plan_greedy"]
    series = []
    lo, hi, ylo, yhi = 1e9, 1, 1e9, 1e-9
    for st in stages:
        rows = gb_table.get(st, {})
        pts = sorted((nodes_of(c), an.ms(b)) for c, b in rows.items() if nodes_of(c))
        if not pts:
            continue
        series.append((st, pts))
        lo, hi = min(lo, pts[0][0]), max(hi, pts[-1][0])
        ylo, yhi = min([ylo] + [p[1] for p in pts]), max([yhi] + [p[1] for p in pts])
    if series:
        svg = os.path.join(plot_dir, "speed_stages.svg")
        svgplot.line_chart(svg, "Planner stages vs graph size (Google Benchmark, wall time)", series,
                           svgplot.Axis(lo, hi, log=True, label="nodes"),
                           svgplot.Axis(max(ylo, 1e-4), yhi, log=True, label="milliseconds"),
                           note="fixtures and synthetic graphs together, ordered by node count")
        out["stages"] = (svg, svgplot.png_copy(svg))
    rows = an.speed_rows(speed)
    for metric, key, label, scale in (("time", "wall_seconds", "seconds", 1.0),
                                      ("rss", "max_rss_bytes", "peak RSS, MiB", 2.0 ** -20)):
        series = []
        vals = []
        for mode in cfg.SPEED_MODES:
            pts = sorted((r[mode]["nodes"], r[mode][key] * scale) for r in rows.values()
                         if mode in r and r[mode].get(key) and r[mode].get("nodes"))
            if pts:
                series.append(("plan --solver " + mode if mode != "inspect" else "inspect", pts))
                vals += pts
        if not series:
            continue
        svg = os.path.join(plot_dir, "speed_cli_%s.svg" % metric)
        svgplot.line_chart(svg, "Whole memplan runs vs graph size (/usr/bin/time -v): %s" % label, series,
                           svgplot.Axis(min(v[0] for v in vals), max(v[0] for v in vals), log=True,
                                        label="nodes"),
                           svgplot.Axis(max(min(v[1] for v in vals), 1e-3), max(v[1] for v in vals), log=True,
                                        label=label))
        out["cli_" + metric] = (svg, svgplot.png_copy(svg))
    return out
