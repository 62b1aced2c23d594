#!/usr/bin/env bash
# Writes python/gpuemu/_config_keys.py from the C++ key table (src/config/key_table.cpp): builds
# unit_config in BUILD (default build) and runs its KeyTable.PythonKeysModuleIsCurrent with the write switch.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  echo "gen-config-keys: no CMake build in $BUILD; run scripts/setup.sh (it builds build/) or pass the directory of another build" >&2
  exit 2
fi
cmake --build "$BUILD" --target unit_config
GPUEMU_WRITE_CONFIG_KEYS=1 "$BUILD/tests/unit/unit_config" --gtest_filter=KeyTable.PythonKeysModuleIsCurrent
echo "gen-config-keys: wrote python/gpuemu/_config_keys.py" >&2
