#!/usr/bin/env bash
# Installs what is missing, builds, and runs memplan on the bundled example:
# GPT-2 small's ONNX Runtime training graph at batch 8, sequence 512.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh memplan >/dev/null
memplan=${BUILD_DIR:-build}/cli/memplan
model=examples/gpt2_small.training.onnx
dims=(--dim batch=8 --dim seq=512)
echo "== memplan inspect $model ${dims[*]}"
"$memplan" inspect "$model" "${dims[@]}"
echo
echo "== memplan plan $model ${dims[*]} --budget 70% -o out"
"$memplan" plan "$model" "${dims[@]}" --budget 70% --time-limit 20 -o out
echo
echo "== memplan validate $model out/plan.json"
"$memplan" validate "$model" out/plan.json "${dims[@]}"
echo
echo "Outputs in out/: plan.json (the plan), report.md (read this first),"
echo "trace.json (open in https://ui.perfetto.dev), memory.svg (memory over time)."
