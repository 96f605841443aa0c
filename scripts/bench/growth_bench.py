#!/usr/bin/env python3
"""Growth of every stage over 1k/10k/100k-node graphs (issue 17).

  scripts/bench/growth_bench.py [--memplan build-rel/cli/memplan]
      [--synth build-rel/bench/memplan-synth] [--runs 3] [--work DIR]

Makes the synthetic training graphs (`memplan-synth --nodes N`, seed 1,
jittered roofline costs), then runs `memplan inspect` and `memplan plan
--solver greedy` (every default output) on each with `--timings`, under
/usr/bin/time -v for the peak RSS. Each stage's growth exponent is
log(t_b / t_a) / log(n_b / n_a) between neighbouring sizes. Writes
docs/bench/growth.md and the same text into docs/BENCHMARKS.md between its
markers. The graphs live in a temporary directory (or --work); nothing but
the Markdown is kept. About 2 minutes on 2 cores with --runs 3.
"""
import argparse
import math
import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from carried_section import ROOT, write_section  # noqa: E402
from run_bench import machine, run, time_v  # noqa: E402

SIZES = [1000, 10000, 100000]
DIMS = ["--dim", "batch=8", "--dim", "seq=512"]
BUDGET = "50%"
STAGE_LINE = re.compile(r"^  (\S+) +([0-9.]+) s(?:  (.*))?$")
# The targets at 100k nodes.
PLAN_TARGET_S, RATIO_TARGET, INSPECT_TARGET_S, RSS_TARGET = 1.0, 12.0, 0.3, 1e9


def default_tool(*parts):
    for build in ("build-rel", "build"):
        path = os.path.join(ROOT, build, *parts)
        if os.path.exists(path):
            return path
    return os.path.join(ROOT, "build", *parts)


def build_type(tool):
    """CMAKE_BUILD_TYPE of the build directory holding `tool`."""
    d = os.path.dirname(os.path.abspath(tool))
    while d != os.path.dirname(d):
        cache = os.path.join(d, "CMakeCache.txt")
        if os.path.exists(cache):
            with open(cache) as f:
                m = re.search(r"^CMAKE_BUILD_TYPE:STRING=(.*)$", f.read(), re.M)
            return (m.group(1) if m else "") or "unknown", os.path.relpath(d, ROOT)
        d = os.path.dirname(d)
    return "unknown", "?"


def parse_stages(stderr):
    """{stage: seconds} and {stage: note} from the --timings lines."""
    seconds, notes = {}, {}
    for line in stderr.splitlines():
        m = STAGE_LINE.match(line)
        if m:
            seconds[m.group(1)] = float(m.group(2))
            notes[m.group(1)] = m.group(3) or ""
    return seconds, notes


def make_graphs(args, work):
    graphs = []
    for n in args.sizes:
        model = os.path.join(work, "synth%d.onnx" % n)
        costs = os.path.join(work, "synth%d.costs.json" % n)
        _, _, err, _ = run([args.synth, "--nodes", str(n), "--seed", "1", "-o", model, "--costs",
                            costs], check=True)
        nodes = int(re.search(r": (\d+) nodes", err).group(1))
        graphs.append({"target": n, "model": model, "costs": costs, "nodes": nodes})
    return graphs


def measure(cmd, runs):
    """Over `runs` runs: the fastest wall time, the largest peak RSS, and each
    stage's fastest time (the machine is shared; the minimum is the figure
    least disturbed by the rest of its load)."""
    best = None
    for _ in range(runs):
        rc, secs, rss, err = time_v(cmd, timeout=1800)
        if rc != 0:
            raise RuntimeError("%s failed (%s): %s" % (" ".join(cmd), rc, err[-2000:]))
        stages, notes = parse_stages(err)
        if best is None:
            best = {"wall": secs, "rss": rss, "stages": stages, "notes": notes}
            continue
        best["wall"], best["rss"] = min(best["wall"], secs), max(best["rss"], rss)
        for s, t in stages.items():
            best["stages"][s] = min(t, best["stages"].get(s, t))
    return best


def measure_all(args, graphs, work):
    out = os.path.join(work, "out")
    for g in graphs:
        base = [g["model"], *DIMS, "--costs", g["costs"], "--timings"]
        g["inspect"] = measure([args.memplan, "inspect", *base, "--json"], args.runs)
        g["plan"] = measure([args.memplan, "plan", *base, "--budget", BUDGET, "--solver", "greedy",
                             "-q", "-o", out], args.runs)
        print("%d nodes: inspect %.2f s, plan %.2f s" % (g["nodes"], g["inspect"]["wall"],
                                                      g["plan"]["wall"]), file=sys.stderr)


def exponent(a, b, key, stage):
    ta, tb = a[key]["stages"].get(stage), b[key]["stages"].get(stage)
    if not ta or not tb or ta <= 0 or tb <= 0:
        return None
    return math.log(tb / ta) / math.log(b["nodes"] / a["nodes"])


def fmt_s(s):
    if s is None:
        return "–"
    return "%.2f s" % s if s >= 1 else "%.1f ms" % (s * 1e3) if s >= 1e-3 else "%.0f µs" % (s * 1e6)


def fmt_x(x):
    return "–" if x is None else "%.2f" % x


def short(n):
    return "%gk" % (n / 1000) if n >= 1000 else str(n)


def pairs(graphs):
    return list(zip(graphs, graphs[1:]))


def stage_table(graphs, key, title):
    stages = list(graphs[-1][key]["stages"])
    notes = graphs[-1][key]["notes"]
    total = graphs[-1][key]["stages"].get("total", 0)
    a, b = graphs[-2:]
    head = ["stage", *("%d nodes" % g["nodes"] for g in graphs),
            *("n^x %s→%s" % (short(p["target"]), short(q["target"])) for p, q in pairs(graphs)),
            "× %s→%s" % (short(a["target"]), short(b["target"])),
            "share at %s" % short(b["target"]), "covers"]
    L = ["#### " + title, "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in stages:
        t = [g[key]["stages"].get(s) for g in graphs]
        ratio = t[-1] / t[-2] if t[-2] and t[-1] else None
        share = "%.0f %%" % (100 * t[-1] / total) if total and t[-1] is not None else "–"
        xs = [fmt_x(exponent(p, q, key, s)) for p, q in pairs(graphs)]
        L.append("| " + " | ".join([s, *(fmt_s(x) for x in t), *xs, fmt_x(ratio), share,
                                    notes.get(s, "")]) + " |")
    return L + [""]


def dominant(graphs, key, skip=("total", "plan_search")):
    st = graphs[-1][key]["stages"]
    ranked = sorted((s for s in st if s not in skip), key=lambda s: -st[s])
    return ", ".join("%s %s" % (s, fmt_s(st[s])) for s in ranked[:3])


def whole_runs(graphs):
    head = ["command", *("%d nodes: wall, peak RSS" % g["nodes"] for g in graphs),
            *("n^x %s→%s" % (short(p["target"]), short(q["target"])) for p, q in pairs(graphs))]
    L = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key, name in (("inspect", "`inspect --json`"), ("plan", "`plan --solver greedy`")):
        cells = ["%s, %.0f MiB" % (fmt_s(g[key]["wall"]), g[key]["rss"] / 2**20) for g in graphs]
        xs = ["%.2f" % (math.log(q[key]["wall"] / p[key]["wall"]) / math.log(q["nodes"] / p["nodes"]))
              for p, q in pairs(graphs)]
        L.append("| " + " | ".join([name, *cells, *xs]) + " |")
    return L + [""]


def targets(graphs):
    big, mid = graphs[-1], graphs[-2]
    plan_s, ins_s = big["plan"]["wall"], big["inspect"]["wall"]
    ratio = plan_s / mid["plan"]["wall"]
    rss = max(big["plan"]["rss"], big["inspect"]["rss"])
    rows = [("`plan --solver greedy`, all outputs, at %d nodes < 1 s" % big["nodes"], fmt_s(plan_s),
             plan_s < PLAN_TARGET_S),
            ("… 10× nodes costs ≤ 12× time (%d → %d nodes)" % (mid["nodes"], big["nodes"]),
             "%.1f×" % ratio, ratio <= RATIO_TARGET),
            ("`inspect` at %d nodes < 0.3 s" % big["nodes"], fmt_s(ins_s), ins_s < INSPECT_TARGET_S),
            ("peak RSS < 1 GB (plan and inspect, %d nodes)" % big["nodes"],
             "%.0f MiB" % (rss / 2**20), rss < RSS_TARGET)]
    L = ["| target (issue 17) | result | met |", "|---|---|---|"]
    L += ["| %s | %s | %s |" % (t, r, "✓" if ok else "✗") for t, r, ok in rows]
    return L + [""]


def section(args, graphs, seconds):
    m = machine(argparse.Namespace(quick=False, ilp_time_limit=None))
    btype, bdir = build_type(args.memplan)
    L = ["## Growth of every stage, %s → %s nodes (issue 17)" % (
        short(graphs[0]["target"]), short(graphs[-1]["target"])), "",
         "Generated by `scripts/bench/growth_bench.py` on %s in %.0f s; commit `%s`; %s build (`%s`); "
         "%d CPUs (%s), load average at the start %s. Graphs: `memplan-synth --nodes N` (seed 1) "
         "with its costs file, `--dim batch=8 --dim seq=512`; plan budget %s of the baseline peak. "
         "Each time is the fastest of %d runs (whole runs: wall clock, with the largest peak RSS of the "
         "runs under `/usr/bin/time -v`; stages: each stage's fastest `--timings` figure, so the stages of "
         "a command need not add up to its total). Growth exponent x of n^x: log(t_b / t_a) / "
         "log(n_b / n_a) between neighbouring sizes; ×: the largest graph's time over the next one's." % (
             m["date"], seconds, m["commit"][:12], btype, bdir, m["nproc"], m["cpu"],
             " / ".join(m["loadavg_start"]), BUDGET, args.runs), ""]
    L += targets(graphs) + whole_runs(graphs)
    L += stage_table(graphs, "plan", "`plan --solver greedy` (all default outputs)")
    L += stage_table(graphs, "inspect", "`inspect --json`")
    L += ["Largest stages at %d nodes: plan: %s; inspect: %s. `plan_search` is one call into "
          "planner/ (its split into the solver's own time and the rest is as the plan reports it); "
          "the Google Benchmark table above splits it further." % (
              graphs[-1]["nodes"], dominant(graphs, "plan"), dominant(graphs, "inspect")), ""]
    return "\n".join(L)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--memplan", default=default_tool("cli", "memplan"))
    p.add_argument("--synth", default=default_tool("bench", "memplan-synth"))
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--sizes", default=",".join(map(str, SIZES)),
                   help="node counts, comma-separated (at least two)")
    p.add_argument("--work", help="keep the graphs here (default: a temporary directory)")
    p.add_argument("--out-md", default=os.path.join(ROOT, "docs", "BENCHMARKS.md"))
    args = p.parse_args()
    args.sizes = [int(n) for n in args.sizes.split(",")]
    args.memplan, args.synth = os.path.abspath(args.memplan), os.path.abspath(args.synth)
    args.out_md = os.path.abspath(args.out_md)
    os.chdir(ROOT)  # machine() asks git about this checkout
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or tmp
        os.makedirs(work, exist_ok=True)
        graphs = make_graphs(args, work)
        measure_all(args, graphs, work)
    text = section(args, graphs, time.monotonic() - t0)
    write_section("growth", "growth", text, bench=args.out_md)
    print(text)


if __name__ == "__main__":
    main()
