#!/usr/bin/env python3
"""Runs every measurement behind docs/BENCHMARKS.md and writes them as JSON
into DATA_DIR; report.py turns them into the report. Called by
scripts/bench.sh (see there for the options); stdlib only.

Each part writes its own file, so a part can be rerun alone (--parts):
  machine.json   nproc, CPU, RAM, load, date, commit
  quality.json   `memplan compare --json` per fixture x device
  objective.json plan.json's model objective and simulated time, per
                 fixture x device x budget x solver (`memplan plan`)
  reach.json     smallest budget memplan can reach, per fixture
  headline.json  activation saved at <= 5 % overhead; maxbatch (DELTA, ATP)
  speed.json     /usr/bin/time -v of whole `memplan plan` / `inspect` runs
  gbench.json    Google Benchmark output of memplan_bench
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import bench_config as cfg


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


def run(cmd, timeout=None, check=False):
    """Runs cmd; returns (rc, stdout, stderr, seconds). rc is None on timeout."""
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return None, out, "timed out after %ss" % timeout, time.monotonic() - t0
    if check and r.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), r.returncode, r.stderr[-2000:]))
    return r.returncode, r.stdout, r.stderr, time.monotonic() - t0


def dim_args(dims):
    out = []
    for d in dims:
        out += ["--dim", d]
    return out


def save(data_dir, name, obj):
    tmp = os.path.join(data_dir, name + ".tmp")
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)
    os.replace(tmp, os.path.join(data_dir, name))


# ---------------------------------------------------------------- machine

def machine(args):
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    ram = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                ram = int(line.split()[1]) * 1024
    commit = run(["git", "rev-parse", "HEAD"])[1].strip()
    subject = run(["git", "log", "-1", "--format=%s"])[1].strip()
    dirty = [l for l in run(["git", "status", "--porcelain"])[1].splitlines() if l.strip()]
    return {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "ram_bytes": ram,
        "loadavg_start": open("/proc/loadavg").read().split()[:3],
        "kernel": os.uname().release,
        "commit": commit,
        "commit_subject": subject,
        "uncommitted_paths": len(dirty),
        "uncommitted": [l[3:] for l in dirty],
        "quick": args.quick,
        "ilp_time_limit": args.ilp_time_limit,
    }


# ---------------------------------------------------------------- quality

def quality(args, fixtures):
    rows = []
    for fx in fixtures:
        for dev in cfg.devices(args.quick):
            budgets = cfg.FINE_BUDGETS if dev == cfg.PARETO_DEVICE else cfg.BUDGETS
            cmd = [args.memplan, "compare", fx["path"], *dim_args(fx["dims"]), "--device", dev,
                   "--budgets", ",".join("%g%%" % b for b in budgets),
                   "--solvers", ",".join(cfg.MEMPLAN_SOLVERS + cfg.BASELINE_SOLVERS),
                   "--time-limit", str(args.ilp_time_limit), "--json"]
            rc, out, err, secs = run(cmd, timeout=args.compare_timeout)
            log("compare %s %s: rc %s, %.1f s" % (fx["name"], dev, rc, secs))
            entry = {"fixture": fx["name"], "device": dev, "dims": fx["dims"], "seconds": secs,
                     "rc": rc, "command": " ".join(cmd[1:])}
            if rc == 0:
                entry["result"] = json.loads(out)
            else:
                entry["error"] = err.strip()[-600:]
            rows.append(entry)
    return rows


def objective(args, fixtures):
    """The model's objective next to the simulation, from the plan.json of
    `memplan plan` at every cell of the quality table (compare --json gives
    only the simulated time)."""
    rows = []
    for fx in fixtures:
        for dev in cfg.devices(args.quick):
            for b in cfg.BUDGETS:
                for solver in cfg.OBJECTIVE_SOLVERS:
                    rows.append(plan_objective(args, fx, dev, b, solver))
            log("objective %s %s: %d plans" % (fx["name"], dev, len(rows)))
    return rows


def plan_objective(args, fx, dev, budget, solver):
    """One `memplan plan` run: its exit status and, when it wrote plan.json
    (exit 0: the plan fits), the solver's objective and the prediction."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [args.memplan, "plan", fx["path"], *dim_args(fx["dims"]), "--device", dev,
               "--budget", "%g%%" % budget, "--solver", solver, "--time-limit", str(args.ilp_time_limit),
               "--no-rewrite", "-q", "-o", tmp]
        rc, _, _, secs = run(cmd, timeout=args.compare_timeout)
        plan = None
        if rc == 0 and os.path.exists(os.path.join(tmp, "plan.json")):
            with open(os.path.join(tmp, "plan.json")) as f:
                plan = json.load(f)
    entry = {"fixture": fx["name"], "device": dev, "budget": budget, "solver": solver, "rc": rc,
             "seconds": secs, "command": " ".join(cmd[1:]).replace(tmp, "OUT")}
    if plan is not None:
        entry.update({"status": plan["solver"]["status"],
                      "objective_seconds": plan["solver"]["objective_seconds"],
                      "bound_seconds": plan["solver"]["bound_seconds"],
                      "budget_bytes": plan["budget_bytes"],
                      "predicted": plan["predicted"]})
    return entry


SMALLEST = re.compile(r"smallest budget memplan can reach is [^(]*\((\d+) B\)")


def reach(args, fixtures):
    """The smallest budget memplan can reach: `plan` at 1 % exits 3 and says it."""
    out = {}
    for fx in fixtures:
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [args.memplan, "plan", fx["path"], *dim_args(fx["dims"]), "--budget", "1%",
                   "--solver", "greedy", "--no-rewrite", "-q", "-o", tmp]
            rc, _, err, _ = run(cmd, timeout=600)
        m = SMALLEST.search(err)
        ins = inspect(args, fx["path"], fx["dims"])
        out[fx["name"]] = {"rc": rc, "smallest_bytes": int(m.group(1)) if m else None,
                           "baseline_peak": ins["baseline_peak"]["bytes"],
                           "peak_by_class": ins["baseline_peak"]["by_class"],
                           "nodes": ins["nodes"], "iteration_seconds": ins["costs"]["iteration_seconds"]}
    return out


def inspect(args, path, dims, device=cfg.PARETO_DEVICE):
    rc, out, err, _ = run([args.memplan, "inspect", path, *dim_args(dims), "--device", device, "--json"],
                          timeout=600)
    if rc != 0:
        raise RuntimeError("inspect %s: %s" % (path, err))
    return json.loads(out)


# ---------------------------------------------------------------- headline

def budget_ok(args, fx, budget_bytes, max_overhead):
    """Does the heuristic fit this budget within max_overhead? (`plan` exit
    0), and the peak of its plan."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [args.memplan, "plan", fx["path"], *dim_args(fx["dims"]), "--budget", str(budget_bytes),
               "--solver", "greedy", "--max-overhead", "%g%%" % max_overhead, "--no-rewrite", "-q",
               "-o", tmp]
        rc, _, _, _ = run(cmd, timeout=600)
        peak = None
        if rc == 0:
            with open(os.path.join(tmp, "plan.json")) as f:
                peak = json.load(f)["predicted"]["peak_bytes"]
    return rc == 0, peak


def saved_at_overhead(args, fx, limit_pct):
    """Bisects the budget (bytes) for the smallest the heuristic meets within
    limit_pct overhead; 10 steps = 0.1 % of the baseline peak."""
    ins = inspect(args, fx["path"], fx["dims"])
    peak = ins["baseline_peak"]["bytes"]
    act = ins["baseline_peak"]["by_class"].get("activation", 0)
    lo, hi = 0.0, 1.0  # fractions of the peak: hi fits, lo is unknown
    best_peak = peak
    for _ in range(10):
        mid = (lo + hi) / 2
        ok, plan_peak = budget_ok(args, fx, int(mid * peak), limit_pct)
        if ok:
            hi = mid
            if plan_peak is not None:
                best_peak = min(best_peak, plan_peak)
        else:
            lo = mid
    return {"fixture": fx["name"], "dims": fx["dims"], "baseline_peak": peak, "activation_at_peak": act,
            "budget_fraction": hi, "plan_peak": best_peak,
            "saved_of_activation": (peak - best_peak) / act if act else None,
            "saved_of_peak": (peak - best_peak) / peak}


def largest_batch_without_plan(args, fx, device_memory):
    """Bisection on the batch with `inspect`: baseline peak <= device memory."""
    def fits(b):
        dims = [d for d in fx["dims"] if not d.startswith("batch=")] + ["batch=%d" % b]
        return inspect(args, fx["path"], dims)["baseline_peak"]["bytes"] <= device_memory
    if not fits(1):
        return 0, None
    lo, hi = 1, 2
    while fits(hi):
        lo, hi = hi, hi * 2
        if hi > 65536:
            return lo, None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    dims = [d for d in fx["dims"] if not d.startswith("batch=")] + ["batch=%d" % lo]
    it = inspect(args, fx["path"], dims)["costs"]["iteration_seconds"]
    return lo, lo / it


def maxbatch(args, fx, max_overhead):
    dims = [d for d in fx["dims"] if not d.startswith("batch=")]
    cmd = [args.memplan, "maxbatch", fx["path"], *dim_args(dims), "--device", cfg.PARETO_DEVICE,
           "--dim-name", "batch", "--max-overhead", "%g%%" % max_overhead, "--json"]
    rc, out, err, secs = run(cmd, timeout=1800)
    log("maxbatch %s <= %g%%: rc %s, %.1f s" % (fx["name"], max_overhead, rc, secs))
    if rc != 0:
        return {"rc": rc, "error": err.strip()[-600:], "command": " ".join(cmd[1:])}
    d = json.loads(out)
    d["rc"], d["seconds"], d["command"] = rc, secs, " ".join(cmd[1:])
    return d


def headline(args, fixtures):
    by_name = {f["name"]: f for f in fixtures}
    out = {"saved": [], "maxbatch": []}
    for name in cfg.SAVED_MODELS:
        if name in by_name:
            r = saved_at_overhead(args, by_name[name], cfg.SAVED_OVERHEAD_PCT)
            log("saved at <= %g%%: %s %.3f" % (cfg.SAVED_OVERHEAD_PCT, name, r["saved_of_activation"] or 0))
            out["saved"].append(r)
    memory = None
    for d in json.loads(run([args.memplan, "devices", "--json"], check=True)[1])["devices"]:
        if d["name"] == cfg.PARETO_DEVICE:
            memory = d["memory_bytes"]
    for name in cfg.MAXBATCH_MODELS:
        if name not in by_name:
            continue
        fx = by_name[name]
        b0, tp0 = largest_batch_without_plan(args, fx, memory)
        entry = {"fixture": name, "dims": [d for d in fx["dims"] if not d.startswith("batch=")],
                 "device": cfg.PARETO_DEVICE, "device_memory": memory,
                 "largest_without_plan": b0, "samples_per_s_without_plan": tp0, "runs": {}}
        for cap in cfg.MAXBATCH_OVERHEADS:
            entry["runs"]["%g" % cap] = maxbatch(args, fx, cap)
        out["maxbatch"].append(entry)
    return out


# ---------------------------------------------------------------- speed

def time_v(cmd, timeout):
    """Runs cmd under /usr/bin/time -v: (rc, wall seconds, max RSS bytes, stderr)."""
    rc, _, err, secs = run(["/usr/bin/time", "-v", *cmd], timeout=timeout)
    rss = None
    for line in err.splitlines():
        line = line.strip()
        if line.startswith("Maximum resident set size"):
            rss = int(line.split(":")[1]) * 1024
        elif line.startswith("Exit status"):
            rc = int(line.split(":")[1])
    # Wall time from our own clock: time -v prints it to 10 ms only.
    return rc, secs, rss, err


def speed(args, fixtures, synth):
    rows = []
    cases = [dict(f, budget="%g%%" % cfg.SPEED_FIXTURE_BUDGET) for f in fixtures]
    cases += [dict(s, budget="%g%%" % cfg.SPEED_SYNTH_BUDGET) for s in synth]
    for c in cases:
        if c.get("nodes") is None:
            c["nodes"] = inspect(args, c["path"], c["dims"])["nodes"]
        for mode in cfg.SPEED_MODES:
            if mode == "auto" and c.get("synthetic_nodes", 0) > cfg.AUTO_MAX_NODES:
                continue
            with tempfile.TemporaryDirectory() as tmp:
                if mode == "inspect":
                    cmd = [args.memplan, "inspect", c["path"], *dim_args(c["dims"]), "--json"]
                else:
                    cmd = [args.memplan, "plan", c["path"], *dim_args(c["dims"]), "--budget", c["budget"],
                           "--solver", mode, "--time-limit", str(args.ilp_time_limit), "-q", "-o", tmp]
                reps = 1 if c.get("synthetic_nodes", 0) >= 100000 or mode == "auto" else cfg.SPEED_REPEATS
                best = None
                for _ in range(reps):
                    rc, wall, rss, err = time_v(cmd, args.speed_timeout)
                    if best is None or (wall is not None and wall < best[1]):
                        best = (rc, wall, rss, err)
            rc, wall, rss, err = best
            log("speed %s %s: rc %s, %.2f s, %.0f MiB" % (c["name"], mode, rc, wall or -1, (rss or 0) / 2**20))
            rows.append({"case": c["name"], "mode": mode, "nodes": c.get("nodes"), "budget": c["budget"],
                         "rc": rc, "wall_seconds": wall, "max_rss_bytes": rss,
                         "timed_out": rc is None,
                         "command": " ".join(cmd[1:]).replace(tmp, "OUT"),
                         "stderr_tail": "" if rc in (0, 3, 5) else err.strip()[-300:]})
    return rows


def make_synth(args, work):
    out = []
    for n in cfg.synth_sizes(args.quick):
        name = "synth%dk" % (n // 1000)
        path = os.path.join(work, name + ".onnx")
        _, _, err, _ = run([args.synth, "--nodes", str(n), "--seed", "1", "-o", path], check=True)
        m = re.search(r"(\d+) nodes", err)
        out.append({"name": name, "path": path, "dims": ["batch=8", "seq=512"],
                    "synthetic_nodes": n, "nodes": int(m.group(1)) if m else n})
    return out


# ---------------------------------------------------------------- gbench

def gbench(args, fixtures, synth):
    names = [f["name"] for f in fixtures] + [s["name"] for s in synth]
    base = [args.bench, "--fixtures=" + args.fixtures, "--synth-dir=" + args.work,
            "--ilp-time-limit=%g" % args.gbench_ilp_time_limit,
            "--budget=%g" % (cfg.GBENCH_FIXTURE_BUDGET / 100.0),
            "--synth-budget=%g" % (cfg.GBENCH_SYNTH_BUDGET / 100.0),
            "--benchmark_min_time=%g" % (0.01 if args.quick else cfg.GBENCH_MIN_TIME),
            "--benchmark_format=console"]
    results = {"context": None, "benchmarks": [], "skipped": []}
    # The ILP on the largest graph runs alone, under a wall-clock limit.
    big = [n for n in names if n in cfg.ILP_ALONE]
    # Names read "ilp/<case>/iterations:1/real_time".
    runs = [(names, "-^ilp/(%s)/" % "|".join(big) if big else "")]
    for n in big:
        runs.append(([n], "^ilp/%s/" % n))
    for cases, flt in runs:
        with tempfile.TemporaryDirectory() as tmp:
            out_path = os.path.join(tmp, "gb.json")
            cmd = base + ["--cases=" + ",".join(cases), "--benchmark_out=" + out_path,
                          "--benchmark_out_format=json"]
            if flt:
                cmd.append("--benchmark_filter=" + flt)
            timeout = args.gbench_ilp_timeout if flt.startswith("^ilp/") else args.gbench_timeout
            rc, _, err, secs = run(cmd, timeout=timeout)
            log("gbench %s %s: rc %s, %.0f s" % (",".join(cases)[:40], flt, rc, secs))
            if rc != 0 or not os.path.exists(out_path):
                results["skipped"].append({"cases": cases, "filter": flt, "rc": rc,
                                           "seconds": secs, "error": err.strip()[-300:]})
                continue
            try:
                with open(out_path) as f:
                    d = json.load(f)
            except ValueError:
                d = {}
            if not d.get("benchmarks"):
                results["skipped"].append({"cases": cases, "filter": flt, "rc": rc, "seconds": secs,
                                           "error": "no benchmark matched"})
                continue
            results["context"] = results["context"] or d.get("context")
            results["benchmarks"] += d.get("benchmarks", [])
    return results


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build-dir", required=True)
    p.add_argument("--data-dir", required=True)
    p.add_argument("--fixtures", default="tests/fixtures")
    p.add_argument("--quick", action="store_true")
    # "objective" (a `memplan plan` per cell) only for data without the
    # objective in compare --json; the report takes it from quality.json.
    p.add_argument("--parts", default="machine,quality,reach,headline,speed,gbench")
    p.add_argument("--ilp-time-limit", type=float, default=cfg.ILP_TIME_LIMIT)
    p.add_argument("--gbench-ilp-time-limit", type=float, default=cfg.GBENCH_ILP_TIME_LIMIT)
    p.add_argument("--compare-timeout", type=float, default=1800)
    p.add_argument("--speed-timeout", type=float, default=600)
    p.add_argument("--gbench-timeout", type=float, default=1800)
    p.add_argument("--gbench-ilp-timeout", type=float, default=cfg.GBENCH_ILP_WALL)
    args = p.parse_args()
    args.memplan = os.path.join(args.build_dir, "cli", "memplan")
    args.synth = os.path.join(args.build_dir, "bench", "memplan-synth")
    args.bench = os.path.join(args.build_dir, "bench", "memplan_bench")
    os.makedirs(args.data_dir, exist_ok=True)
    args.work = os.path.join(args.data_dir, "work")
    os.makedirs(args.work, exist_ok=True)
    fixtures = cfg.fixtures(args.fixtures, args.quick)
    if not fixtures:
        sys.exit("bench: no fixtures found in " + args.fixtures)
    parts = args.parts.split(",")
    t0 = time.monotonic()
    if "machine" in parts:
        save(args.data_dir, "machine.json", machine(args))
    if "quality" in parts:
        save(args.data_dir, "quality.json", quality(args, fixtures))
    if "objective" in parts:
        save(args.data_dir, "objective.json", objective(args, fixtures))
    if "reach" in parts:
        save(args.data_dir, "reach.json", reach(args, fixtures))
    if "headline" in parts:
        save(args.data_dir, "headline.json", headline(args, fixtures))
    synth = make_synth(args, args.work) if ("speed" in parts or "gbench" in parts) else []
    if "speed" in parts:
        save(args.data_dir, "speed.json", speed(args, fixtures, synth))
    if "gbench" in parts:
        save(args.data_dir, "gbench.json", gbench(args, fixtures, synth))
    log("measurements done in %.0f s" % (time.monotonic() - t0))


if __name__ == "__main__":
    main()
