#!/usr/bin/env bash
# Rewrites the `ops` of tests/vectors/op_family.json from the C++ loader, the one source of the
# extends/implementations rule: builds unit_config in BUILD (default build) and runs its
# OpFamilyVectors test with the write switch. Then make the Python and VS Code mirrors pass again.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  echo "gen-op-family-vectors: no CMake build in $BUILD; run scripts/setup.sh (it builds build/) or pass the directory of another build" >&2
  exit 2
fi
cmake --build "$BUILD" --target unit_config
GPUEMU_WRITE_OP_FAMILY=1 "$BUILD/tests/unit/unit_config" --gtest_filter='OpFamilyVectors.TheVectorsAreWhatTheLoaderMakes'
echo "gen-op-family-vectors: wrote tests/vectors/op_family.json" >&2
