#!/usr/bin/env bash
# Installs what is missing, builds, and runs memplan on the bundled example.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh memplan >/dev/null
memplan=${BUILD_DIR:-build}/cli/memplan
model=examples/mlp.training.onnx
echo "== memplan inspect $model --dim batch=64"
"$memplan" inspect "$model" --dim batch=64
