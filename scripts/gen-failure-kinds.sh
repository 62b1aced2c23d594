#!/usr/bin/env bash
# Writes python/gpuemu/_failure_kinds.py and vscode/src/failureKindTable.ts from the one table of
# failure kinds (src/check/failure_kinds.cpp): builds unit_report in BUILD (default build) and runs
# its FailureKinds tests with the write switch.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  echo "gen-failure-kinds: no CMake build in $BUILD; run scripts/setup.sh (it builds build/) or pass the directory of another build" >&2
  exit 2
fi
cmake --build "$BUILD" --target unit_report
GPUEMU_WRITE_FAILURE_KINDS=1 "$BUILD/tests/unit/unit_report" \
  --gtest_filter='FailureKinds.PythonConstantsAreCurrent:FailureKinds.VsCodeTableIsCurrent'
echo "gen-failure-kinds: wrote python/gpuemu/_failure_kinds.py and vscode/src/failureKindTable.ts" >&2
