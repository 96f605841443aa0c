#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) in build-fuzz/ and runs
# each for SECONDS (default 30). Fails if a target crashes, leaks, runs out of
# memory or times out, or if a saved reproducer in tests/fuzz/regressions/
# fails again.
#   scripts/fuzz.sh [SECONDS] [TARGET...]     e.g. scripts/fuzz.sh 600 onnx_loader_fuzzer
# Inputs the fuzzers find go to build-fuzz/fuzz-corpus/<target>/ (the seeds in
# tests/fuzz/corpus/ are only read); crashes to build-fuzz/fuzz-artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-30}
shift || true
build=${FUZZ_BUILD_DIR:-build-fuzz}
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(onnx_loader_fuzzer costs_file_fuzzer ort_profile_fuzzer plan_json_fuzzer)
fi

./scripts/install-deps.sh --fuzz
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DMEMPLAN_FUZZ=ON \
  -DMEMPLAN_BUILD_TESTS=OFF -DMEMPLAN_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"

# Leaks are findings too; one report stops the target.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
failed=()
for t in "${targets[@]}"; do
  bin="$build/fuzz/$t"
  corpus="$build/fuzz-corpus/$t"
  artifacts="$build/fuzz-artifacts/$t"
  log="$build/fuzz-$t.log"
  mkdir -p "$corpus" "$artifacts"
  flags=(-rss_limit_mb=4096 -timeout=10 -artifact_prefix="$artifacts/")
  [ -f "tests/fuzz/dict/$t.dict" ] && flags+=(-dict="tests/fuzz/dict/$t.dict")

  # Saved reproducers first: each must now pass.
  shopt -s nullglob
  regressions=(tests/fuzz/regressions/"$t"/*)
  shopt -u nullglob
  if ((${#regressions[@]})) && ! "$bin" "${flags[@]}" "${regressions[@]}" >"$log" 2>&1; then
    echo "fuzz: $t: a saved reproducer fails again; see $log" >&2
    tail -n 40 "$log" >&2
    failed+=("$t")
    continue
  fi

  seeds=()
  [ -d "tests/fuzz/corpus/$t" ] && seeds=("tests/fuzz/corpus/$t")
  if "$bin" "${flags[@]}" -max_total_time="$seconds" -print_final_stats=1 "$corpus" "${seeds[@]}" >"$log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "fuzz: $t: ok, ${execs:-?} runs in ${seconds}s, corpus $(find "$corpus" -type f | wc -l) inputs"
  else
    echo "fuzz: $t: FAILED; reproducer in $artifacts/, log $log" >&2
    grep -E "^(==[0-9]+==ERROR|SUMMARY|memplan fuzz:)|runtime error|^    #[0-9] " "$log" | head -n 30 >&2 || true
    failed+=("$t")
  fi
done

if ((${#failed[@]})); then
  echo "fuzz: failed: ${failed[*]}" >&2
  exit 1
fi
