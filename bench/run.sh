#!/usr/bin/env bash
# Builds the C++ benchmarks (build-bench/, Release at -O2 as shipped, -DGPUEMU_BENCH=ON) and runs every
# benchmark: bench/run.py prints one table of ratios. Arguments go to run.py (--quick, --only a,c).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${GPUEMU_BENCH_BUILD:-$ROOT/build-bench}"

if [[ ! -f "$BUILD/build.ninja" ]]; then
  # -O2 like scripts/setup.sh and build-static.sh: the numbers are those of the binary users run.
  nice -n 10 cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" \
    -DGPUEMU_BENCH=ON -DGPUEMU_BUILD_TESTS=OFF >/dev/null
fi
nice -n 10 cmake --build "$BUILD" --target bench_compare bench_fill >/dev/null
export GPUEMU_BENCH_COMPARE="$BUILD/bench/bench_compare"
export GPUEMU_BENCH_FILL="$BUILD/bench/bench_fill"
exec python3 "$ROOT/bench/run.py" "$@"
