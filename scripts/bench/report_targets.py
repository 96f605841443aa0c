"""The "## Targets" section of BENCHMARKS.md: issue #13's targets over the
quality grid (analysis.target_*), the speed targets, and every miss."""
import analysis as an
import bench_config as cfg
from report_text import fmt_s

MIB = 2.0 ** 20


def _mark(t, ok=None):
    if t["checked"] == 0:
        return "n/a"
    if ok is None:
        ok = not t["misses"]
    return "✓" if ok else "✗"


def _cell(m):
    return "%s %s %g%%" % (m["fixture"], m["device"], m["budget"])


def _pct(v):
    return "does not fit" if v is None else "%.2f %%" % v


def _worst(misses, key):
    return max(misses, key=key) if misses else None


def row_model(t):
    text = "%d of %d plans that fit (%d %s without a fitting plan)" % (
        t["met"], t["checked"], t["nofit"], "run" if t["nofit"] == 1 else "runs")
    w = t["worst"]
    if w:
        text += "; largest difference: %s %s: model %.2f %% vs simulated %.2f %%" % (
            _cell(w), w["solver"], w["model"], w["sim"])
    return ("model objective within %g pt of the simulated overhead, every greedy and ILP plan" % an.TOL_PT,
            text, _mark(t))


def row_proven(t):
    text = ("%d of %d proven ILP plans (optimal or gap ≤ %g %%) within %g pt of greedy, or where greedy does not "
            "fit" % (t["met"], t["checked"], an.PROVEN_GAP_PCT, an.TOL_PT))
    w = _worst(t["misses"], lambda m: m["ilp"]["overhead_percent"] - m["greedy"]["overhead_percent"])
    if w:
        text += "; worst: %s: ILP %.2f %% vs greedy %.2f %%" % (
            _cell(w), w["ilp"]["overhead_percent"], w["greedy"]["overhead_percent"])
    return ("a proven ILP plan never simulates worse than greedy by > %g pt" % an.TOL_PT, text, _mark(t))


def row_greedy(t):
    share = 100.0 * t["met"] / t["checked"] if t["checked"] else 0.0
    text = "%d of %d cells where both fit (%.1f %%); only the ILP fits in %d, only greedy in %d" % (
        t["met"], t["checked"], share, t["only_ilp"], t["only_greedy"])
    w = _worst(t["misses"], lambda m: m["greedy"] - an.GREEDY_FACTOR * m["ilp"])
    if w:
        text += "; worst: %s: greedy %.2f %% vs ILP %.2f %%" % (_cell(w), w["greedy"], w["ilp"])
    return ("greedy ≤ %g × ILP + %g pt in ≥ %g %% of the cells" % (an.GREEDY_FACTOR, an.TOL_PT,
                                                                 100 * an.GREEDY_SHARE),
            text, _mark(t, share >= 100 * an.GREEDY_SHARE))


def row_baselines(t):
    text = "%d of %d cells where a baseline fits (%d baseline plans, %d beat memplan)" % (
        t["met"], t["checked"], t["plans"], len(t["misses"]))
    w = _worst(t["misses"], lambda m: float("inf") if m["memplan"] is None
               else m["memplan"] - m["baseline_overhead"])
    if w:
        text += "; worst: %s: %s %.2f %% vs memplan %s" % (
            _cell(w), w["baseline"], w["baseline_overhead"],
            _pct(w["memplan"]) + ("" if w["memplan"] is None else " (%s)" % w["memplan_solver"]))
    return ("memplan's best (%s) ≤ every baseline, every cell" % ", ".join(an.MEMPLAN), text, _mark(t))


def _saved_text(r):
    if r["bisection"] is None:
        return "%s %s (grid)" % (r["fixture"], _opt_pct(r["grid"]))
    return "%s %.1f %% (grid %s)" % (r["fixture"], r["bisection"], _opt_pct(r["grid"]))


def _opt_pct(v):
    return "–" if v is None else "%.1f %%" % v


def row_saved(t):
    text = "; ".join(_saved_text(r) for r in t["rows"]) or "no BERT or GPT-2 fixture measured"
    return ("activation memory saved at ≤ %g %% overhead ≥ %d %% on every BERT and GPT-2 fixture" % (
        cfg.SAVED_OVERHEAD_PCT, an.SAVED_TARGET_PCT), text, _mark(t))


def row_cost(t):
    fx, dev, b = an.COST_CELL
    best = t["best"]
    text = "not measured" if not t["checked"] else (
        "no memplan plan fits" if best is None else "%.2f %% (%s)" % (best[1], best[0]))
    return ("%s on %s at %d%%: memplan's best ≤ %d %% overhead" % (fx, dev, b, an.COST_TARGET_PCT), text, _mark(t))


def row_monotone(t):
    text = "%d of %d series (fixture × device × solver, %d budgets in all) without a break" % (
        t["met"], t["checked"], t["budgets"])
    if t["misses"]:
        m = t["misses"][0]
        text += "; %d breaks, e.g. %s %s %s fails at %g%% but fits at %g%%" % (
            len(t["misses"]), m["fixture"], m["device"], m["solver"], m["budget"], m["lower"])
    return ("feasibility monotone in the budget (%s)" % ", ".join(an.MEMPLAN), text, _mark(t))


def compute_all(q, objective_rows, headline, reach):
    """{key: target result} in the order of the table."""
    return {"model": an.target_model_vs_sim(objective_rows), "proven": an.target_proven_ilp(q),
            "greedy": an.target_greedy_vs_ilp(q), "baselines": an.target_best_vs_baselines(q),
            "saved": an.target_saved(headline, q, reach), "cost": an.target_cost_cell(q),
            "monotone": an.target_monotone(q)}


ROWS = {"model": row_model, "proven": row_proven, "greedy": row_greedy, "baselines": row_baselines,
        "saved": row_saved, "cost": row_cost, "monotone": row_monotone}


def definitions():
    budgets = ", ".join("%d" % b for b in cfg.BUDGETS)
    return ("Grid: every fixture × device preset (%s) × budget (%s %% of the baseline peak) of the quality "
            "tables; one cell = one fixture, device and budget. Overheads are simulated (`memplan compare "
            "--json`) unless said otherwise; a plan that does not fit its budget counts as no plan. "
            "**Model vs simulated**: every greedy and ILP row of `memplan compare --json` (every budget of "
            "the quality run); model overhead = its `objective_seconds` (the solver's objective under "
            "docs/model.md, for the plan handed out) / the baseline iteration × 100, simulated = its "
            "`overhead_percent`. **Proven**: ILP status "
            "optimal or `ilp_gap_percent` ≤ %g. **Saved**: (baseline peak − plan peak) / activation bytes at "
            "the baseline peak, at the smallest budget the heuristic meets within %g %% overhead (the bisection "
            "of the headline section below); grid: the same for memplan's best plan over the %s budgets of the "
            "quality run (judged on the grid only where no bisection ran). **Monotone**: every budget measured, "
            "the finer grid of %s included; a break is a budget where the solver's plan does not fit while it "
            "fits at a lower budget. The grid can show only breaks between its budgets: one within a step of the "
            "grid goes unseen." % (", ".join(cfg.DEVICES), budgets, an.PROVEN_GAP_PCT,
                                         cfg.SAVED_OVERHEAD_PCT, cfg.PARETO_DEVICE, cfg.PARETO_DEVICE))


def targets(results, speed_rows, gbt):
    L = ["", "## Targets", "", "| target | result | met |", "|---|---|---|"]
    for key, fn in ROWS.items():
        L.append("| %s | %s | %s |" % fn(results[key]))
    big = speed_rows.get("synth100k", {}).get("greedy")
    if big:
        L += speed_target_rows(big)
    L += ["", definitions()]
    if big:
        L += speed_breakdown(big, gbt)
    L += miss_table(results)
    return L


def speed_target_rows(big):
    wall, rss = big["wall_seconds"], big["max_rss_bytes"]
    ok_t = wall is not None and wall < 1.0 and big["rc"] == 0
    ok_m = rss is not None and rss < 2e9
    return ["| heuristic end-to-end < 1 s at 100k nodes (`memplan plan --solver greedy`, %d nodes) | %s%s | %s |" % (
                big["nodes"], fmt_s(wall), "" if ok_t or wall is None else " (%.1f× the target)" % wall,
                "✓" if ok_t else "✗"),
            "| … with peak RSS < 2 GB | %.0f MiB%s | %s |" % (
                (rss or 0) / MIB, "" if ok_m else " (%.1f× the target)" % ((rss or 0) / 2e9),
                "✓" if ok_m else "✗")]


def speed_breakdown(big, gbt):
    stages = [(s, gbt.get(s, {}).get("synth100k")) for s in
              ("load", "problem", "greedy", "schedule", "simulate", "validate", "plan_greedy", "plan_json",
               "rewrite")]
    got = dict(stages)
    parts = ", ".join("%s %s" % (s, fmt_s(an.ms(b) / 1e3)) for s, b in stages if b)
    if not parts:
        return []
    wall = big["wall_seconds"]
    covered = sum(an.ms(got[s]) / 1e3 for s in ("load", "plan_greedy", "plan_json", "rewrite") if got.get(s))
    rest = (wall - covered) if wall is not None else None
    return ["", "Where the 100k-node run's time goes (Google Benchmark, one stage each): %s. "
            "`plan_greedy` is the whole planning call (problem, greedy with simulator-judged moves, "
            "schedule, budget tightening, validation). Load + plan_greedy + plan_json + rewrite = %s; %s" % (
                parts, fmt_s(covered), _rest_text(rest))]


def _rest_text(rest):
    if rest is None:
        return "the whole run's time is missing."
    if rest >= 0:
        return ("the other %s of the whole run is spent in what no stage here covers (the memory layout, "
                "trace, plot, report and file writes of `memplan plan`)." % fmt_s(rest))
    # The stages are timed one at a time; `memplan plan` overlaps them: shape inference runs in
    # a child beside the graph's build, the greedy runs on every core, the outputs are written
    # in parallel.
    return ("that is %s more than the whole run: the stages are timed one at a time, while `memplan plan` "
            "overlaps them (shape inference in a child process beside the graph's build, the greedy's "
            "runs on both cores, the output files written in parallel)." % fmt_s(-rest))


def _miss_rows(results):
    """(target, fixture, device, budget, memplan, other) per miss."""
    out = []
    for m in results["model"]["misses"]:
        out.append(("model vs simulated", m["fixture"], m["device"], "%g%%" % m["budget"],
                    "model %.2f %% (%s, %s)" % (m["model"], m["solver"], m["status"]), "simulated %.2f %%" % m["sim"]))
    for m in results["proven"]["misses"]:
        i, g = m["ilp"], m["greedy"]
        out.append(("proven ILP ≤ greedy + %g pt" % an.TOL_PT, m["fixture"], m["device"], "%g%%" % m["budget"],
                    "ILP %.2f %% (%s)" % (i["overhead_percent"], _status(i)), "greedy %.2f %%" % g["overhead_percent"]))
    for m in results["greedy"]["misses"]:
        out.append(("greedy ≤ %g×ILP + %g pt" % (an.GREEDY_FACTOR, an.TOL_PT), m["fixture"], m["device"],
                    "%g%%" % m["budget"], "greedy %.2f %%" % m["greedy"], "ILP %.2f %%" % m["ilp"]))
    for m in results["baselines"]["misses"]:
        out.append(("best ≤ baselines", m["fixture"], m["device"], "%g%%" % m["budget"],
                    _pct(m["memplan"]) + ("" if m["memplan"] is None else " (%s)" % m["memplan_solver"]),
                    "%s %.2f %%" % (m["baseline"], m["baseline_overhead"])))
    return out + _miss_rows_rest(results)


def _miss_rows_rest(results):
    out = []
    for m in results["saved"]["misses"]:
        out.append(("saved ≥ %d %%" % an.SAVED_TARGET_PCT, m["fixture"], cfg.PARETO_DEVICE, "–",
                    "saved %.1f %%%s" % (m["value"], " (grid)" if m["bisection"] is None else ""),
                    "target %d %%" % an.SAVED_TARGET_PCT))
    for m in results["cost"]["misses"]:
        best = m["best"]
        out.append(("cost ≤ %d %%" % an.COST_TARGET_PCT, m["fixture"], m["device"], "%g%%" % m["budget"],
                    "no plan fits" if best is None else "%.2f %% (%s)" % (best[1], best[0]),
                    "target %d %%" % an.COST_TARGET_PCT))
    for m in results["monotone"]["misses"]:
        out.append(("monotone feasibility", m["fixture"], m["device"], "%g%%" % m["budget"],
                    "%s does not fit" % m["solver"], "fits at %g%%" % m["lower"]))
    return out


def _status(r):
    gap = r.get("ilp_gap_percent")
    return "opt" if r.get("status") == "optimal" else ("gap %.2f %%" % gap if gap is not None else r.get("status"))


def miss_table(results):
    rows = _miss_rows(results)
    if not rows:
        return []
    return (["", "<details><summary>Every miss (%d)</summary>" % len(rows), "",
             "| target | fixture | device | budget | memplan | other |", "|---|---|---|---|---|---|"]
            + ["| %s |" % " | ".join(r) for r in rows] + ["", "</details>"])
