#!/usr/bin/env bash
# Builds memplan with the CUDA backend and runs a few fixtures on the GPU:
# each planned by `memplan plan` at 50% of its baseline peak, then executed
# by `memplan run --backend cuda` (once with poisoned frees for integrity,
# three times without for time), printing measured next to predicted
# (device bytes from cudaMemGetInfo against the budget, iteration time,
# integrity errors), after measuring the pinned copy rates against the
# preset (scripts/gpu_bandwidth.py, where PyTorch is) and turning them into
# OUT_DIR/calibrated.costs.json (`memplan devices --calibrate`). Fails on an integrity
# error, measured bytes over the budget, or a measured iteration time more
# than TIME_TOLERANCE (default 10 %) from the predicted one. Each case's row
# also goes to OUT_DIR/results.jsonl. A few minutes in all.
# It proves something only on a GPU with a driver new enough for this
# build's CUDA: anywhere else it prints "nothing proven" and exits 3, so a
# machine without a GPU can never pass it. Without nvcc it fails (exit 1).
#   scripts/gpu-check.sh                 BUILD_DIR=build-gpu DEVICE=h200-141gb
#   MEMPLAN=path/to/memplan scripts/gpu-check.sh   use a built binary, skip the build
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build-gpu}
device=${DEVICE:-h200-141gb}
out=${OUT_DIR:-$build_dir/gpu-check}

nothing_proven() {  # why
  echo "gpu-check: $1; nothing proven"
  exit 3
}

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  nothing_proven "no GPU here (nvidia-smi finds none)"
fi
nvidia-smi -L
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
# The highest CUDA version the driver supports, from nvidia-smi's banner.
driver_cuda=$(nvidia-smi | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -1)
nvcc_cuda=$(PATH=$PATH:/usr/local/cuda/bin nvcc --version 2>/dev/null |
  sed -n 's/.*release \([0-9.]*\),.*/\1/p' || true)
echo "gpu-check: driver ${driver:-unknown} (supports CUDA ${driver_cuda:-unknown}), nvcc CUDA ${nvcc_cuda:-none}"
# A driver older than the toolkit cannot load the build's kernels.
if [ -n "$driver_cuda" ] && [ -n "$nvcc_cuda" ] &&
  [ "$(printf '%s\n%s\n' "$nvcc_cuda" "$driver_cuda" | sort -V | head -1)" != "$nvcc_cuda" ]; then
  nothing_proven "driver $driver supports CUDA $driver_cuda, older than nvcc's $nvcc_cuda"
fi

if [ -n "${MEMPLAN:-}" ]; then
  memplan=$MEMPLAN
else
  export PATH=$PATH:/usr/local/cuda/bin
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DMEMPLAN_BUILD_TESTS=OFF \
    -DMEMPLAN_BUILD_BENCH=OFF >/dev/null
  if ! grep -q '^CMAKE_CUDA_COMPILER:.*nvcc' "$build_dir/CMakeCache.txt"; then
    echo "gpu-check: CMake found no nvcc, so the CUDA backend is not built" >&2
    exit 1
  fi
  cmake --build "$build_dir" -j "$(nproc)" --target memplan >/dev/null
  memplan=$build_dir/cli/memplan
fi
mkdir -p "$out"
"$memplan" devices --json >"$out/devices.json"
python3 scripts/gpu_bandwidth.py --preset-json "$out/devices.json" --device "$device" \
  -o "$out/bandwidth.json" || echo "gpu-check: no copy-rate figures (above)"
# The measured rates and launch floor as a costs file later plans can use
# (`memplan plan MODEL --costs $out/calibrated.costs.json`).
if [ -s "$out/bandwidth.json" ]; then
  "$memplan" devices --calibrate "$out/bandwidth.json" --device "$device" \
    -o "$out/calibrated.costs.json" || setup_failed=1
fi
setup_failed=${setup_failed:-0}
export TIME_TOLERANCE=${TIME_TOLERANCE:-10}

# fixture|dims: big enough that kernels, not launches, set the time.
cases=(
  "mlp|--dim batch=4096"
  "resnet50|--dim batch=32"
  "bert_base|--dim batch=16 --dim seq=512"
  "gpt2_small|--dim batch=8 --dim seq=1024"
)

# One case whose baseline does not fit in the device's memory at all, but
# whose plan does: gpt2_small (seq 1024) planned for 85 % of the device's
# memory (the rest is the CUDA context's), at 1.3 times the largest batch
# whose baseline fits that (a baseline about 1.1 times the device; what is
# swapped out waits in pinned host memory, which the GPU machines have
# about 128 GiB of), or the largest batch `memplan maxbatch` finds within
# 20 % overhead if that is smaller. "fixture|dims|budget".
oversize_case() {
  local memory budget batch baseline
  memory=$(python3 -c 'import json, sys
print(next(d["memory_bytes"] for d in json.load(open(sys.argv[1]))["devices"] if d["name"] == sys.argv[2]))' \
    "$out/devices.json" "$device") || return 1
  budget=$((memory / 100 * 85))
  timeout 300 "$memplan" maxbatch tests/fixtures/gpt2_small.training.onnx --device "$device" \
    --dim seq=1024 --budget "$budget" --json >"$out/maxbatch.json" || return 1
  batch=$(python3 -c 'import json, math, sys
d = json.load(open(sys.argv[1]))
print(min(d["largest_batch"], math.ceil(1.3 * d["largest_batch_without_plan"])))' \
    "$out/maxbatch.json") || return 1
  baseline=$("$memplan" inspect tests/fixtures/gpt2_small.training.onnx --dim seq=1024 \
    --dim "batch=$batch" --device "$device" --json |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["baseline_peak"]["bytes"])') || return 1
  echo "gpu-check: oversize case: gpt2_small batch $batch, baseline peak $baseline B on a $memory B device, budget $budget B" >&2
  ((baseline > memory)) || return 1
  echo "gpt2_small|--dim batch=$batch --dim seq=1024|$budget"
}
if oversize=$(oversize_case); then
  cases+=("$oversize")
else
  echo "gpu-check: no case whose baseline exceeds the device's memory could be made"
  setup_failed=1
fi

# Plans at the case's budget, else 50% of the baseline peak; where that
# cannot be met (mlp is mostly parameters), 2% above the smallest budget
# memplan says it can reach.
make_plan() {  # fixture solver dir budget dims...
  local fixture=$1 solver=$2 dir=$3 budget=$4 reach
  shift 4
  for _ in 1 2; do
    if timeout 300 "$memplan" plan "tests/fixtures/$fixture.training.onnx" "$@" --device "$device" \
      --budget "$budget" --solver "$solver" --time-limit 30 -q -o "$dir" 2>"$dir.plan.err"; then
      echo "$budget"
      return 0
    fi
    [ "$budget" = 50% ] || return 1 # a case's own budget is not moved
    reach=$(sed -n 's/.*can reach is .* (\([0-9]*\) B).*/\1/p' "$dir.plan.err")
    [ -n "$reach" ] || return 1
    budget=$((reach + reach / 50))
  done
  return 1
}
printf '%-11s %-7s %-10s %13s %13s %13s %6s %11s %11s %7s %6s\n' fixture solver budget budget_bytes \
  measured_B peak_bytes frag measured_s predicted_s diff errors
status=$setup_failed
for c in "${cases[@]}"; do
  IFS='|' read -r fixture case_dims case_budget <<<"$c"
  # shellcheck disable=SC2206
  dims=($case_dims)
  solvers=(greedy vdnn)
  [ -n "$case_budget" ] && solvers=(greedy) # vDNN cannot go that low
  label=$fixture${case_budget:+-oversize}
  for solver in "${solvers[@]}"; do
    dir=$out/$label-$solver
    if ! budget=$(make_plan "$fixture" "$solver" "$dir" "${case_budget:-50%}" "${dims[@]}"); then
      printf '%-11s %-7s no plan: %s\n' "$label" "$solver" "$(tail -1 "$dir.plan.err")"
      status=1
      continue
    fi
    # Integrity with poisoned frees; timing without them (PLAN_FORMAT gives
    # a free no time, a memset on the compute stream takes some).
    rc=0
    timeout 300 "$memplan" run "tests/fixtures/$fixture.training.onnx" --plan "$dir/plan.json" \
      --backend cuda --json >"$dir/run.json" 2>"$dir/run.err" || rc=$?
    if [ "$rc" -eq 2 ] && grep -q "no usable CUDA device\|no CUDA device\|no CUDA driver" "$dir/run.err"; then
      nothing_proven "$(tail -1 "$dir/run.err")"
    fi
    trc=0
    if [ "$rc" -eq 0 ] || [ "$rc" -eq 4 ] || [ "$rc" -eq 5 ]; then
      timeout 300 "$memplan" run "tests/fixtures/$fixture.training.onnx" --plan "$dir/plan.json" \
        --backend cuda --iterations 3 --no-poison --json >"$dir/time.json" 2>"$dir/time.err" || trc=$?
    fi
    # 4: integrity errors, 5: measured device bytes over the budget.
    if { [ "$rc" -ne 0 ] && [ "$rc" -ne 4 ] && [ "$rc" -ne 5 ]; } || [ ! -s "$dir/time.json" ]; then
      printf '%-11s %-7s run failed (%s/%s): %s\n' "$label" "$solver" "$rc" "$trc" \
        "$(tail -1 "$dir/run.err" "$dir/time.err" 2>/dev/null | tail -1)"
      status=1
      continue
    fi
    [ "$rc" -ne 0 ] && status=1
    python3 - "$label" "$solver" "$budget" "$dir/run.json" "$dir/time.json" "$out/results.jsonl" <<'PY' ||
import json, os, sys
fixture, solver, budget, run_path, time_path, results = sys.argv[1:7]
r, t = json.load(open(run_path)), json.load(open(time_path))
mem, it, i = r["memory"], t["iteration"], r["integrity"]
m, p = it["measured_seconds"], it["predicted_seconds"]
diff = f"{100 * (m / p - 1):+.1f}%" if p > 0 else "n/a"
time_ok = p > 0 and abs(m / p - 1) * 100 <= float(os.environ["TIME_TOLERANCE"])
flag = ("" if mem["fits_budget"] else "  OVER BUDGET") + ("" if time_ok else "  TIME OFF")
with open(results, "a") as f:
    f.write(json.dumps({"fixture": fixture, "solver": solver, "budget": budget,
                        "budget_bytes": mem["budget_bytes"], "measured_bytes": mem["measured"]["bytes"],
                        "peak_bytes": mem["predicted"]["peak_bytes"], "measured_seconds": m,
                        "predicted_seconds": p, "integrity_errors": i["errors"],
                        "fits_budget": mem["fits_budget"], "time_within_tolerance": time_ok}) + "\n")
print(f"{fixture:<11} {solver:<7} {budget:<10} {mem['budget_bytes']:>13} {mem['measured']['bytes']:>13} "
      f"{mem['predicted']['peak_bytes']:>13} {mem['fragmentation']:>6.3f} {m:>11.6f} {p:>11.6f} "
      f"{diff:>7} {i['errors']:>6}{flag}")
sys.exit(0 if time_ok else 1)
PY
      status=1
  done
done

# A deliberately broken plan must be caught: the first swap_in dropped from
# a plan that swaps, so a later read finds freed or stale bytes (or the
# validator refuses the schedule first). Either is exit 4.
broken=""
for c in "${cases[@]}"; do
  f=$out/${c%%|*}-greedy/plan.json
  if [ -s "$f" ] && grep -q '"swap_in"' "$f"; then broken=${c%%|*}; break; fi
done
if [ -n "$broken" ]; then
  python3 - "$out/$broken-greedy/plan.json" "$out/broken-plan.json" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
s = plan["schedule"]
del s[next(i for i, e in enumerate(s) if e["op"] == "swap_in")]
json.dump(plan, open(sys.argv[2], "w"))
PY
  brc=0
  timeout 300 "$memplan" run "tests/fixtures/$broken.training.onnx" --plan "$out/broken-plan.json" \
    --backend cuda --json >"$out/broken-run.json" 2>"$out/broken-run.err" || brc=$?
  if [ "$brc" -eq 4 ]; then
    echo "gpu-check: broken plan ($broken greedy, first swap_in dropped) caught: exit 4: $(tail -1 "$out/broken-run.err")"
  else
    echo "gpu-check: broken plan ($broken greedy, first swap_in dropped) NOT caught: exit $brc"
    status=1
  fi
else
  echo "gpu-check: no greedy plan swaps, so no broken-plan case"
  status=1
fi
exit $status
