#!/usr/bin/env bash
# Configures and builds memplan into build/ (BUILD_DIR overrides).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} -DMEMPLAN_WERROR=ON "$@" >/dev/null
cmake --build "$build_dir" -j "$jobs"
