#!/usr/bin/env bash
# CI smoke test of the benchmark report: scripts/bench.sh --quick on the tiny
# fixture with the binaries of this build, into a temporary directory; fails
# when the report or its charts are missing or a section is empty.
#   bench_smoke.sh BUILD_DIR
set -euo pipefail
build_dir=${1:?usage: bench_smoke.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
for exe in cli/memplan bench/memplan-synth bench/memplan_bench; do
  if [ ! -x "$build_dir/$exe" ]; then
    echo "bench_smoke: $build_dir/$exe not built (MEMPLAN_BUILD_BENCH=OFF or no Google Benchmark); skipped"
    exit 77
  fi
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
start=$(date +%s)
"$root/scripts/bench.sh" --quick --no-build --no-install --build-dir "$build_dir" --out "$out"
elapsed=$(($(date +%s) - start))

report="$out/BENCHMARKS.md"
fail() { echo "bench_smoke: $*" >&2; exit 1; }
[ -s "$report" ] || fail "no report at $report"
for section in "## Targets" "## Plan quality" "## Speed" "## What looked wrong" "### a100-40gb"; do
  grep -qF "$section" "$report" || fail "section '$section' missing"
done
grep -qE '^\| mlp \(batch=64\)' "$report" || fail "no quality row for mlp"
for target in "model objective within" "proven ILP plan" "greedy ≤" "every baseline" "activation memory saved" \
  "gpt2_small on a100-40gb" "feasibility monotone"; do
  grep -qF "$target" "$report" || fail "target '$target' missing from the Targets table"
done
grep -qF "bench-notes.md" "$report" || fail "no link to docs/bench-notes.md"
grep -qE '^\| synth1k \| [0-9]+ \|' "$report" || fail "no speed row for the 1k synthetic graph"
grep -qE '^\| mlp \| 26 \| [0-9]+ \| [0-9.]+ \|' "$report" || fail "no Google Benchmark row for mlp"
[ -s "$out/bench/pareto_mlp.svg" ] || fail "no Pareto chart"
[ -s "$out/bench/speed_stages.svg" ] || fail "no stage chart"
grep -q "<svg" "$out/bench/pareto_mlp.svg" || fail "the Pareto chart is not SVG"
# The sections generated apart are carried into every regenerated report.
for m in ort_peak:ort-peak tight_budgets:tight-budgets maxbatch:maxbatch growth:growth; do
  if [ -f "$root/docs/bench/${m%%:*}.md" ]; then
    grep -qF "<!-- ${m#*:}:begin -->" "$report" || fail "section ${m#*:} not carried"
  fi
done
((elapsed < 60)) || fail "took ${elapsed} s (budget 60 s)"
echo "bench_smoke: report with all sections in ${elapsed} s"
