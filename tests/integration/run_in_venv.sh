#!/usr/bin/env bash
# ctest entry for the Python integration checks: runs SCRIPT (a file of
# tests/integration/) with .venv's Python, passing --memplan and the rest.
#   tests/integration/run_in_venv.sh SCRIPT MEMPLAN_BINARY [script args]
# Sets up .venv (scripts/requirements.txt: onnxruntime-training-cpu, onnx) on
# first use, so CI needs no step of its own for it.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
script="$1"
memplan="$(realpath "$2")"
shift 2

if [ ! -x "$repo/.venv/bin/python" ] || ! cmp -s "$repo/scripts/requirements.txt" "$repo/.venv/.requirements"; then
  # Other test runs may be installing at the same time: one at a time.
  exec 9>"${TMPDIR:-/tmp}/memplan-venv.lock"
  flock 9
  "$repo/scripts/install-deps.sh" --python
fi
exec "$repo/.venv/bin/python" "$repo/tests/integration/$script" --memplan "$memplan" "$@"
