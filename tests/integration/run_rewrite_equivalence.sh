#!/usr/bin/env bash
# ctest entry for rewrite_equivalence.py: the rewritten training graphs run
# bitwise-equal to the originals in ONNX Runtime.
#   tests/integration/run_rewrite_equivalence.sh MEMPLAN_BINARY [script args]
# Sets up .venv (scripts/requirements.txt: onnxruntime-training-cpu, onnx) on
# first use, so CI needs no step of its own for it.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
memplan="$(realpath "$1")"
shift

if [ ! -x "$repo/.venv/bin/python" ] || ! cmp -s "$repo/scripts/requirements.txt" "$repo/.venv/.requirements"; then
  # Another test run may be installing at the same time: one at a time.
  exec 9>"${TMPDIR:-/tmp}/memplan-venv.lock"
  flock 9
  "$repo/scripts/install-deps.sh" --python
fi
exec "$repo/.venv/bin/python" "$repo/tests/integration/rewrite_equivalence.py" --memplan "$memplan" "$@"
