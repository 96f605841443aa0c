#!/usr/bin/env bash
# Configures and builds memplan into build/ (BUILD_DIR overrides).
#   scripts/build.sh            everything
#   scripts/build.sh memplan    only the named targets
# CMAKE_ARGS adds configure options.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}
# shellcheck disable=SC2086
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" -DMEMPLAN_WERROR=ON ${CMAKE_ARGS:-} >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$build_dir" -j "$jobs" "${targets[@]}"
