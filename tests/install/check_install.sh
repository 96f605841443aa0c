#!/usr/bin/env bash
# Installs memplan from a build tree into a fresh prefix, then builds and runs
# a small program that finds it with find_package(memplan): the embedding
# path an export pipeline uses.
set -euo pipefail
build_dir=$1
fixture=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
"$work/prefix/bin/memplan" --version | grep -q "memplan"
test -f "$work/prefix/include/memplan/ir/graph.h"

mkdir -p "$work/consumer"
cat >"$work/consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.22)
project(consumer CXX)
set(CMAKE_CXX_STANDARD 20)
find_package(memplan REQUIRED)
add_executable(consumer main.cc)
target_link_libraries(consumer PRIVATE memplan::memplan_ir)
CMAKE
cat >"$work/consumer/main.cc" <<'CPP'
#include <iostream>
#include "ir/baseline_memory.h"
#include "ir/liveness.h"
#include "ir/onnx_loader.h"
int main(int argc, char** argv) {
  memplan::ir::LoadOptions o;
  o.dims["batch"] = 2;
  auto m = memplan::ir::load_model(argv[1], o);
  std::cout << memplan::ir::baseline_memory(m.graph, memplan::ir::Liveness(m.graph)).peak_bytes << "\n";
}
CPP
cmake -S "$work/consumer" -B "$work/consumer/build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer/build" -j2 >/dev/null
peak=$("$work/consumer/build/consumer" "$fixture")
cli_peak=$("$work/prefix/bin/memplan" inspect "$fixture" --dim batch=2 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["baseline_peak"]["bytes"])')
echo "library peak $peak, installed CLI peak $cli_peak"
[ "$peak" = "$cli_peak" ] && [ "$peak" -gt 0 ]
