#!/usr/bin/env python3
"""How big can it get (issue 16, item 5): the GPT-2 family on a100-40gb and
v100-16gb.

  scripts/bench/maxbatch_bench.py [--memplan build-rel/cli/memplan] [--solver greedy]

Part 1: `memplan maxbatch --max-overhead 20%` (seq 512) per model and
device: the largest batch without a plan, the largest within 20 % overhead
and their ratio, the batch with the most samples/s (simulated, and under
ATP's model TP(B)), and every batch it tried (the curve). Part 2: which
member trains at batch 8, seq 512 on each device: its baseline peak (the
training state) over the device's memory, and the overhead of a plan for
the device's memory (`memplan plan --budget <memory>`). Writes
docs/bench/maxbatch.md and the same text into docs/BENCHMARKS.md between
its markers; keeps nothing else. Both parts run each member alone and,
where tests/fixtures has its optimizer model, with its AdamW step and
moments. With greedy: 93 s on 2 cores (Release build, load average 2; before
the AdamW rows); 13 minutes with RelWithDebInfo under a load of 9.
"""
import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from carried_section import ROOT, write_section  # noqa: E402
from growth_bench import build_type, default_tool  # noqa: E402
from run_bench import SMALLEST, machine, run  # noqa: E402

MODELS = ["gpt2_small", "gpt2_medium", "gpt2_large", "gpt2_xl"]
DEVICES = ["a100-40gb", "v100-16gb"]
CAP = 20
SEQ = "seq=512"
TRAIN_BATCH = "batch=8"


def fixture(model):
    return os.path.join(ROOT, "tests", "fixtures", model + ".training.onnx")


def optimizer(model):
    return os.path.join(ROOT, "tests", "fixtures", model + ".optimizer.onnx")


# Each member alone, then with its AdamW step and moments where ORT's
# optimizer model is committed (the state a user's real step carries):
# (label, fixture name, with AdamW).
VARIANTS = [(m, m, False) for m in MODELS] + [
    (m + " + AdamW", m, True) for m in MODELS if os.path.exists(optimizer(m))]


def model_args(variant):
    _, model, adamw = variant
    return [fixture(model)] + (["--optimizer", optimizer(model)] if adamw else [])


def device_memory(memplan):
    rc, out, err, _ = run([memplan, "devices", "--json"], check=True)
    return {d["name"]: d["memory_bytes"] for d in json.loads(out)["devices"]}


def maxbatch(args, variant, device):
    cmd = [args.memplan, "maxbatch", *model_args(variant), "--dim", SEQ, "--device", device,
           "--max-overhead", "%d%%" % CAP, "--solver", args.solver, "--json"]
    rc, out, err, secs = run(cmd, timeout=3600)
    if rc != 0:
        raise RuntimeError("%s failed (%s): %s" % (" ".join(cmd), rc, err[-2000:]))
    doc = json.loads(out)
    doc["seconds"] = secs
    print("maxbatch %s %s: %d (no plan %d), %.0f s" % (
        variant[0], device, doc["largest_batch"], doc["largest_batch_without_plan"], secs), file=sys.stderr)
    return doc


def baseline_peak(args, variant, device):
    cmd = [args.memplan, "inspect", *model_args(variant), "--dim", TRAIN_BATCH, "--dim", SEQ, "--device",
           device, "--json"]
    return json.loads(run(cmd, check=True)[1])["baseline_peak"]["bytes"]


def trains(args, variant, device, memory):
    """Batch 8 on the device: baseline peak, and a plan for its memory."""
    peak = baseline_peak(args, variant, device)
    row = {"peak": peak, "ratio": peak / memory, "fits": peak <= memory, "overhead": 0.0,
           "floor": None, "planned": False}
    if row["fits"]:
        return row
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [args.memplan, "plan", *model_args(variant), "--dim", TRAIN_BATCH, "--dim", SEQ, "--device",
               device, "--budget", str(memory), "--solver", args.solver, "--outputs", "plan", "-q",
               "-o", tmp]
        rc, _, err, _ = run(cmd, timeout=3600)
        row["planned"] = True
        if rc == 0:
            with open(os.path.join(tmp, "plan.json")) as f:
                p = json.load(f)["predicted"]
            row["fits"] = True
            row["overhead"] = 100 * (p["iteration_seconds"] / p["baseline_iteration_seconds"] - 1)
        else:
            m = SMALLEST.search(err)
            row["floor"] = int(m.group(1)) if m else None
    return row


def gib(b):
    return "%.2f GiB" % (b / 2**30)


def ratio(a, b):
    return "%.2f×" % (a / b) if b else "–"


def batch_table(results, memory):
    L = ["### Largest batch (seq 512) and the throughput peak", "",
         "No plan: the largest batch whose baseline peak fits the device's memory. ≤ %d %%: the largest "
         "batch with a plan (for the device's memory) within %d %% overhead; ×: over the no-plan batch. "
         "Throughput peaks: the batch with the most samples/s among the batches `maxbatch` tried within "
         "the cap, simulated and under ATP's model TP(B) = B / [max(MS/BW, Tf) + max(MS/BW, Tb + Tr)] "
         "(MS: bytes swapped, BW: the slower link direction, Tr: recompute time). + AdamW: the training "
         "graph with ONNX Runtime's optimizer model (`--optimizer`: an AdamW step per parameter and "
         "its two moments in the iteration)." % (CAP, CAP), "",
         "| model | device | memory | no plan: batch | ≤ %d %%: batch | × | simulated peak: batch, "
         "samples/s | ATP TP(B) peak: batch, samples/s | batches tried | maxbatch run |" % CAP,
         "|---|---|---|---|---|---|---|---|---|---|"]
    for (model, dev), d in results.items():
        L.append("| %s | %s | %s | %d | %d | %s | %d, %.1f | %d, %.1f | %d | %.0f s |" % (
            model, dev, gib(memory[dev]), d["largest_batch_without_plan"], d["largest_batch"],
            ratio(d["largest_batch"], d["largest_batch_without_plan"]), d["throughput_batch"],
            d["throughput_samples_per_s"], d["atp_model_batch"], d["atp_model_samples_per_s"],
            len(d["table"]), d["seconds"]))
    return L + [""]


def curve_tables(results):
    L = ["<details><summary>The curves: every batch `maxbatch` tried</summary>", ""]
    for (model, dev), d in results.items():
        L += ["**%s on %s** (fits: ✓ within %d %%, over: fits the memory above the cap, ✗: no plan "
              "fits)" % (model, dev, CAP), "",
              "| batch | baseline peak | no plan | fits | plan peak | overhead | samples/s simulated "
              "| ATP TP(B) |", "|---|---|---|---|---|---|---|---|"]
        for r in d["table"]:
            fits = "✓" if r["fits"] else ("over" if r["fits_memory"] else "✗")
            mem = r["fits_memory"]
            L.append("| %d | %s | %s | %s | %s | %s | %s | %s |" % (
                r["batch"], gib(r["baseline_peak_bytes"]), "fits" if r["fits_without_plan"] else "–",
                fits, gib(r["peak_bytes"]) if mem else "–",
                "%.2f %%" % r["overhead_percent"] if mem else "–",
                "%.1f" % r["samples_per_s"] if mem else "–",
                "%.1f" % r["atp_model_samples_per_s"] if mem else "–"))
        L.append("")
    return L + ["</details>", ""]


def family_table(family, memory):
    L = ["### The largest member that trains at batch 8, seq 512", "",
         "Training state: the baseline peak (parameters, gradients, optimizer state, activations) at "
         "batch 8; ×: over the device's memory. Plan: `memplan plan --budget <device memory> --solver "
         "greedy` where the state does not fit (floor: the smallest budget memplan can reach, when no "
         "plan fits). + AdamW: with the optimizer step and moments, as above.", "",
         "| device | model | training state | × memory | trains | overhead |", "|---|---|---|---|---|---|"]
    summary = []
    for dev in DEVICES:
        largest = None
        for model, _, adamw in VARIANTS:
            r = family[(model, dev)]
            how = ("without a plan" if not r["planned"] else "with a plan") if r["fits"] else \
                "no (floor %s)" % (gib(r["floor"]) if r["floor"] else "?")
            L.append("| %s | %s | %s | %.2f× | %s | %s |" % (
                dev, model, gib(r["peak"]), r["ratio"], how,
                "%.2f %%" % r["overhead"] if r["fits"] else "–"))
            if r["fits"] and not adamw:
                largest = model
        if largest:
            r = family[(largest, dev)]
            summary.append("%s: **%s** (%s overhead, its training state %.2f× the %s)" % (
                dev, largest, "%.2f %%" % r["overhead"], r["ratio"], gib(memory[dev])))
        else:
            summary.append("%s: none" % dev)
    return L + ["", "Largest that trains (training graph alone): " + "; ".join(summary) + ".", ""]


def section(args, results, family, memory, seconds):
    m = machine(argparse.Namespace(quick=False, ilp_time_limit=None))
    btype, bdir = build_type(args.memplan)
    L = ["## How big can it get: the GPT-2 family (issue 16)", "",
         "Generated by `scripts/bench/maxbatch_bench.py` on %s in %.0f s (%d CPUs, load average at the "
         "start %s); commit `%s`; %s build (`%s`); solver `%s`; roofline costs of each device "
         "preset." % (m["date"], seconds, m["nproc"], " / ".join(m["loadavg_start"]),
                      m["commit"][:12], btype, bdir, args.solver), ""]
    L += batch_table(results, memory) + curve_tables(results) + family_table(family, memory)
    return "\n".join(L)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--memplan", default=default_tool("cli", "memplan"))
    p.add_argument("--solver", default="greedy")
    p.add_argument("--out-md", default=os.path.join(ROOT, "docs", "BENCHMARKS.md"))
    args = p.parse_args()
    args.memplan, args.out_md = os.path.abspath(args.memplan), os.path.abspath(args.out_md)
    os.chdir(ROOT)  # machine() asks git about this checkout
    t0 = time.monotonic()
    memory = device_memory(args.memplan)
    family = {(v[0], d): trains(args, v, d, memory[d]) for d in DEVICES for v in VARIANTS}
    results = {(v[0], d): maxbatch(args, v, d) for d in DEVICES for v in VARIANTS}
    text = section(args, results, family, memory, time.monotonic() - t0)
    write_section("maxbatch", "maxbatch", text, bench=args.out_md)
    print(text)


if __name__ == "__main__":
    main()
