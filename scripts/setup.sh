#!/usr/bin/env bash
# Quick start, step 1: installs what is missing (Debian packages, Python packages), builds gpuemu,
# and runs the CI job on the bundled example project (whose buggy kernels it must catch).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

BUILD=${GPUEMU_BUILD_DIR:-build}
# Only the binary (the test suites build their own, sanitized, in build-asan/); unity batches parse
# the big headers once per dozen files, which halves a clean build on two cores.
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUEMU_UNITY=ON >/dev/null
cmake --build "$BUILD" --target gpuemu

echo "setup: running the CI job on examples/ (its buggy kernels must be caught)" >&2
set +e
"$BUILD/gpuemu" --config examples/gpuemu.toml ci run --out "$BUILD/example-ci"
rc=$?
set -e
if [ "$rc" -ne 1 ]; then
  echo "setup: the example run ended with exit code $rc, expected 1 (failures found)" >&2
  exit 1
fi
echo "setup: gpuemu caught the example project's buggy kernels (exit 1, as intended);" >&2
echo "setup: its reports are in $BUILD/example-ci (result.json, junit.xml, gpuemu.sarif, summary.md)." >&2

# Real @triton.jit kernels, on this CPU, under the Triton interpreter (examples/triton/README.md).
echo "setup: running the CI job on examples/triton/ (real Triton kernels on the CPU; bugs must be caught)" >&2
set +e
"$BUILD/gpuemu" --config examples/triton/gpuemu.toml ci run --out "$BUILD/example-triton-ci"
rc=$?
set -e
if [ "$rc" -ne 1 ] || ! replay=$(python3 scripts/check-example-run.py "$BUILD/example-triton-ci/result.json"); then
  echo "setup: the Triton example run ended with exit code $rc; expected 1 with every *_bug kernel failing" >&2
  echo "setup: on its numbers and every other kernel passing (see $BUILD/example-triton-ci/summary.txt)" >&2
  exit 1
fi
echo "setup: replaying one caught Triton bug: $replay" >&2
set +e
"$BUILD/gpuemu" --config examples/triton/gpuemu.toml ${replay#gpuemu }
rc=$?
set -e
if [ "$rc" -ne 1 ]; then
  echo "setup: the replay ended with exit code $rc, expected 1 (the same failure again)" >&2
  exit 1
fi
echo "setup: done. The replay reproduced the failure; reports are in $BUILD/example-triton-ci." >&2
exit 0
