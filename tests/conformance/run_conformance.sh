#!/usr/bin/env bash
# The ONNX conformance corpus: `memplan inspect` on every model.onnx of
# Debian's libonnx-testdata (the ONNX project's backend test models). Each
# must either succeed (exit 0; stderr only "memplan: warning:" lines) or fail
# with exactly one "memplan: error:" line and exit 2 -- never crash, hang
# (per-model timeout) or exit otherwise. Symbolic dims are bound at 2: a first
# run names the unbound ones, a second binds them.
#   tests/conformance/run_conformance.sh MEMPLAN [DATA_DIR]
# Env: CONFORMANCE_JOBS (default 2), CONFORMANCE_TIMEOUT (seconds, default 20).
# Exits 77 (ctest: skipped) when the test data is not installed.
set -euo pipefail

memplan=${1:?usage: run_conformance.sh MEMPLAN [DATA_DIR]}
data=${2:-/usr/share/libonnx-testdata}
jobs=${CONFORMANCE_JOBS:-2}
export CONFORMANCE_TIMEOUT=${CONFORMANCE_TIMEOUT:-20}
[ -x "$memplan" ] || { echo "conformance: $memplan is not an executable" >&2; exit 1; }
if [ ! -d "$data" ]; then
  echo "conformance: $data not found (apt-get install libonnx-testdata); skipped"
  exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
find "$data" -name model.onnx \( -type f -o -type l \) | LC_ALL=C sort >"$work/models"
total=$(wc -l <"$work/models")
if [ "$total" -eq 0 ]; then
  echo "conformance: no model.onnx under $data; skipped"
  exit 77
fi

# One model: prints "ok|error|FAIL <exit> <model> <why>" on one line.
check_one() {
  local memplan=$1 model=$2 err rc dims=() names
  err=$(mktemp)
  run() {
    rc=0
    timeout -k 5 "$CONFORMANCE_TIMEOUT" "$memplan" inspect "$model" "${dims[@]}" >/dev/null 2>"$err" || rc=$?
  }
  run
  if [ "$rc" -eq 2 ] && grep -q "symbolic dims not bound:" "$err"; then
    names=$(sed -n 's/.*symbolic dims not bound: \(.*\); bind them with.*/\1/p' "$err")
    for n in $names; do dims+=(--dim "$n=2"); done
    run
  fi
  local lines why=""
  lines=$(wc -l <"$err")
  case $rc in
    0)
      if grep -qv '^memplan: warning: ' "$err"; then why="stderr: $(grep -v '^memplan: warning: ' "$err" | head -n 1)"; fi
      [ -z "$why" ] && echo "ok 0 $model" ;;
    2)
      if [ "$lines" -ne 1 ] || ! grep -q '^memplan: error: ' "$err"; then
        why="exit 2 with $lines stderr lines: $(head -n 2 "$err" | tr '\n' '|')"
      else
        echo "error 2 $model $(cat "$err")"
      fi ;;
    124 | 137) why="timed out after ${CONFORMANCE_TIMEOUT}s" ;;
    *)
      if [ "$rc" -gt 128 ]; then why="killed by signal $((rc - 128))"; else why="exit $rc"; fi
      why="$why: $(head -n 3 "$err" | tr '\n' '|')" ;;
  esac
  [ -n "$why" ] && echo "FAIL $rc $model ${dims[*]} $why"
  rm -f "$err"
  return 0
}
export -f check_one

start=$SECONDS
xargs -a "$work/models" -d '\n' -P "$jobs" -n 1 bash -c 'check_one "$0" "$1"' "$memplan" >"$work/results"

ok=$(grep -c '^ok ' "$work/results" || true)
clear=$(grep -c '^error ' "$work/results" || true)
failed=$(grep -c '^FAIL ' "$work/results" || true)
missing=$((total - ok - clear - failed))
passed=$((ok + clear))
if [ "${CONFORMANCE_VERBOSE:-0}" = 1 ]; then cat "$work/results"; fi
grep '^FAIL ' "$work/results" | head -n 50 | sed 's/^/conformance: /' >&2 || true
if [ "$missing" -ne 0 ]; then
  echo "conformance: $missing model(s) gave no result" >&2
  failed=$((failed + missing))
fi
echo "conformance: $passed passed, $failed failed ($ok ok, $clear clear error) of $total models in $((SECONDS - start))s"
[ "$failed" -eq 0 ]
