#!/usr/bin/env bash
# Regenerates docs/BENCHMARKS.md and its charts (docs/bench/*.svg, *.png):
# plan quality of every solver and baseline, the papers' headline figures in
# our model, and planner speed (whole runs and Google Benchmark stages).
#
#   scripts/bench.sh                 everything (~30-45 min on 2 cores)
#   scripts/bench.sh --quick         mlp fixture + 1k synthetic graph, < 1 min;
#                                    writes to a temporary directory, not docs/
# Options:
#   --out DIR         where BENCHMARKS.md and bench/ go (default docs/, or a
#                     temporary directory with --quick)
#   --build-dir DIR   build to use (default build-bench, configured Release)
#   --no-build        use --build-dir as it is
#   --data-dir DIR    keep the raw measurements here (default: a temporary dir)
#   --parts LIST      rerun only some parts (machine,quality,objective,reach,headline,speed,gbench)
#                     into an existing --data-dir, then rewrite the report
#   --no-install      do not apt-get install missing tools (CI smoke test)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

quick=0 out="" build_dir="$root/build-bench" build=1 data_dir="" parts="" install=1
while (($#)); do
  case "$1" in
    --quick) quick=1 ;;
    --out) out=$2; shift ;;
    --build-dir) build_dir=$2; shift ;;
    --no-build) build=0 ;;
    --data-dir) data_dir=$2; shift ;;
    --parts) parts=$2; shift ;;
    --no-install) install=0 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown option $1" >&2; exit 1 ;;
  esac
  shift
done

# Tools the report needs: /usr/bin/time for peak RSS, rsvg-convert for PNG
# copies of the charts (Debian: time, librsvg2-bin). Installed when missing
# and we may; without rsvg-convert the report links the SVGs only.
need=()
[ -x /usr/bin/time ] || need+=(time)
command -v rsvg-convert >/dev/null || need+=(librsvg2-bin)
if ((${#need[@]})) && ((install)); then
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo -n)
  echo "bench.sh: installing ${need[*]}" >&2
  { "${sudo_cmd[@]}" apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}"; } ||
    echo "bench.sh: could not install ${need[*]}; continuing without" >&2
fi
[ -x /usr/bin/time ] || { echo "bench.sh: /usr/bin/time is required (Debian package 'time')" >&2; exit 1; }

if ((build)); then
  cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DMEMPLAN_BUILD_BENCH=ON >/dev/null
  cmake --build "$build_dir" -j"$(nproc)" --target memplan memplan-synth memplan_bench
fi
for exe in cli/memplan bench/memplan-synth bench/memplan_bench; do
  [ -x "$build_dir/$exe" ] || { echo "bench.sh: $build_dir/$exe is missing (build with MEMPLAN_BUILD_BENCH=ON)" >&2; exit 1; }
done

tmp=""
cleanup() { if [ -n "$tmp" ]; then rm -rf "$tmp"; fi; }
trap cleanup EXIT
if [ -z "$data_dir" ]; then
  tmp=$(mktemp -d)
  data_dir="$tmp/data"
fi
if [ -z "$out" ]; then
  if ((quick)); then
    out=$(mktemp -d "${TMPDIR:-/tmp}/memplan-bench-quick.XXXXXX")
  else
    out="$root/docs"
  fi
fi
mkdir -p "$out/bench" "$data_dir"

# Relative fixture paths keep the commands the report quotes short.
args=(--build-dir "$build_dir" --data-dir "$data_dir" --fixtures tests/fixtures)
((quick)) && args+=(--quick)
[ -n "$parts" ] && args+=(--parts "$parts")
start=$(date +%s)
python3 "$root/scripts/bench/run_bench.py" "${args[@]}"
elapsed=$(($(date +%s) - start))
command="scripts/bench.sh"
python3 "$root/scripts/bench/report.py" --data-dir "$data_dir" --out-md "$out/BENCHMARKS.md" \
  --plot-dir "$out/bench" --command "$command" --seconds "$elapsed"
echo "bench.sh: wrote $out/BENCHMARKS.md and $out/bench/ in ${elapsed} s"
