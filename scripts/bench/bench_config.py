"""What the benchmark measures: fixtures and their dims, devices, budgets,
limits. One place, so the report can state exactly what was run."""
import os

# Dims per fixture, chosen as a realistic training step on a 32-80 GB GPU:
# transformers at batch 8 x 512 tokens (BERT's pre-training length, half
# GPT-2's context), ResNet-50 at ImageNet batch 32, the MLPs at batch 64.
FIXTURE_DIMS = {
    "mlp": ["batch=64"],
    "mlp_dropout": ["batch=64"],
    "resnet50": ["batch=32"],
    "bert_base": ["batch=8", "seq=512"],
    "bert_large": ["batch=8", "seq=512"],
    "gpt2_small": ["batch=8", "seq=512"],
    "gpt2_medium": ["batch=8", "seq=512"],
    "gpt2_large": ["batch=8", "seq=512"],
    "gpt2_xl": ["batch=8", "seq=512"],
}
QUICK_FIXTURES = ["mlp"]

DEVICES = ["v100-32gb", "a100-40gb", "h100-80gb"]
PARETO_DEVICE = "a100-40gb"
# The budgets of the quality table, % of the baseline peak.
BUDGETS = [80, 60, 50, 40, 30, 20]
# On the Pareto device a finer grid, which contains BUDGETS.
FINE_BUDGETS = [95, 90, 85, 80, 75, 70, 65, 60, 55, 50, 45, 40, 35, 30, 25, 20]

# The solvers `compare` runs in the quality part: memplan's own (auto = the
# heuristic, then the ILP warm-started from it, keeping the faster plan) and
# the baselines.
MEMPLAN_SOLVERS = ["greedy", "ilp", "auto"]
BASELINE_SOLVERS = ["chen-sqrt", "recompute-greedy", "recompute-ilp", "vdnn", "atp", "dtr"]
# `memplan plan` runs of the objective part (plan.json: the model's objective
# next to the simulated time), at every cell of the quality table.
OBJECTIVE_SOLVERS = ["greedy", "ilp"]

# The ILP's time limit in `compare` and `plan --solver auto` (seconds). Every
# fixture's ILP either proves optimality or gives up well within it on this
# machine; the whole bench stays under ~45 min on 2 cores.
ILP_TIME_LIMIT = 5
# Google Benchmark's ILP runs (one solve per graph).
GBENCH_ILP_TIME_LIMIT = 5
GBENCH_MIN_TIME = 0.2
# Budgets of the Google Benchmark cases, % of each baseline peak: one every
# transformer fixture's heuristic meets, and a tight one for the synthetic graphs.
GBENCH_FIXTURE_BUDGET = 70
GBENCH_SYNTH_BUDGET = 50
# The ILP on these graphs runs in its own process under a wall-clock limit
# (Cbc checks its time limit between nodes, not inside the root LP).
ILP_ALONE = ["synth100k"]
GBENCH_ILP_WALL = 300

# Activation memory saved at <= this overhead (DELTA's headline).
SAVED_OVERHEAD_PCT = 5
SAVED_MODELS = ["resnet50", "bert_base", "bert_large", "gpt2_small", "gpt2_medium", "gpt2_large",
                "gpt2_xl"]
# Max batch (DELTA) and throughput peak (ATP) on PARETO_DEVICE.
MAXBATCH_MODELS = ["resnet50", "bert_large", "gpt2_medium", "gpt2_large", "gpt2_xl"]
MAXBATCH_OVERHEADS = [20, 1000]  # memplan's default cap, and effectively none

# Whole-CLI runs under /usr/bin/time -v.
SPEED_MODES = ["inspect", "greedy", "auto"]
SPEED_FIXTURE_BUDGET = 80  # every fixture but the MLPs reaches it
SPEED_SYNTH_BUDGET = 50
SPEED_REPEATS = 3  # best of, for runs under a minute
AUTO_MAX_NODES = 10000  # `--solver auto` (greedy + ILP) up to this size


def synth_sizes(quick):
    return [1000] if quick else [1000, 10000, 100000]


def devices(quick):
    return DEVICES


def fixtures(folder, quick):
    names = QUICK_FIXTURES if quick else list(FIXTURE_DIMS)
    out = []
    for n in names:
        path = os.path.join(folder, n + ".training.onnx")
        if os.path.exists(path):
            out.append({"name": n, "path": path, "dims": FIXTURE_DIMS[n]})
    return out
