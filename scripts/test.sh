#!/usr/bin/env bash
# Quick start, step 2: every test suite. Builds gpuemu with AddressSanitizer and UBSan, runs the
# C++ unit tests (ctest), the Python and end-to-end suites (pytest) against that binary, the same
# for the process, shared-file, worker and daemon tests with the portable platform paths forced
# (build-portable), the macOS cross-compile of gpuemu for x86_64 and aarch64 with zig
# (scripts/cross-macos.sh, build-cross), then the static binary's tests
# (scripts/test-static.sh) and the parsers' libFuzzer harnesses (scripts/parser-harnesses.sh, clang-19 in build-harness).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

scripts/install-deps.sh
scripts/install-deps.sh --clang

# ccache (install-deps.sh --clang) for every build below: a CI run compiles mostly what the last one
# did, and a clean build is most of its time. CCACHE_BASEDIR makes a clone in another folder hit the
# same entries; compiler warnings are replayed from the cache, so counting them below still works.
export CCACHE_BASEDIR="$ROOT"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

BUILD=${GPUEMU_TEST_BUILD_DIR:-build-asan}
JOBS=${GPUEMU_JOBS:-$(nproc)}
echo "test: building $BUILD with ASan/UBSan (clang-19)" >&2
# Debug (-O0) compiles fastest; the sanitizers, not the optimiser, are what these tests need.
# Unity batches parse the big headers once per dozen files: a clean build in CI is most of its time.
# clang-19 compiles this sanitized build in less than half GCC 12's time (unity batches: 12 s
# against 27 s, 23 s against 44 s); GCC still builds every source file, as a user's Release
# build, in scripts/test-static.sh, whose warnings are checked below.
# GPUEMU_WERROR: the tests hold the code to warning-free (a user's build only warns).
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang-19 \
  -DCMAKE_CXX_COMPILER=clang++-19 -DGPUEMU_SANITIZE=ON -DGPUEMU_UNITY=ON -DGPUEMU_WERROR=ON "${launcher[@]}" >/dev/null
cmake --build "$BUILD" -j "$JOBS"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export GPUEMU_BIN="$ROOT/$BUILD/gpuemu"
# The static build's minimal libcurl and the tests' debootstrap roots depend on Debian's packages,
# not on this checkout: keep them in one folder outside it, as pip keeps its cache, so a CI run on a
# clean clone reuses them instead of building curl and two Debian roots again (scripts/test-static.sh
# takes a lock on it). A machine without that folder makes it on the first run.
export GPUEMU_THIRD_PARTY_DIR=${GPUEMU_THIRD_PARTY_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gpuemu/third_party}
export GPUEMU_SOURCE_DIR="$ROOT"

status=0
LOGS=$(mktemp -d)
echo "test: C++ unit tests (ctest)" >&2
# A failing unit test must not stop the other suites: judge ctest by its summary, after the rest.
ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS" 2>&1 | tee "$LOGS/ctest.log" || true
grep -q "100% tests passed" "$LOGS/ctest.log" || status=1

echo "test: Python and end-to-end tests (pytest)" >&2
# The third-party checks run here and in ctest, each tool pinned in scripts/install-deps.sh and a
# failure when missing (actionlint: under CI=true): the official SARIF 2.1.0 schema with jsonschema
# and the strict JUnit flavour against Jenkins' junit-10.xsd (unit_report), a signed report verified
# with securesystemslib and action.yml/workflows with check-jsonschema
# (tests/e2e/test_third_party_checks.py), actionlint (tests/e2e/test_action.py, test_init.py), and S3
# push and pull against moto's server with signature checking on (unit_remote MotoS3,
# tests/e2e/test_remote_baselines.py).
suites=()
[ -d python/tests ] && suites+=(python/tests)
[ -d tests/e2e ] && suites+=(tests/e2e)
[ -d tests/action ] && suites+=(tests/action)
set +e
# The end-to-end suites judge the binary by its exit code; a leak report would turn a pass into
# exit 23 with no failing assertion, so leak checking stays with the unit tests (ctest above).
# --durations: the slowest tests, so CI's log shows where its time goes (the budget is 25 minutes).
# --dist loadgroup: tests marked xdist_group("...") share a worker (module fixtures that make whole
# ci runs run once, not once per worker); the rest are balanced as with the default --dist load.
ASAN_OPTIONS="${ASAN_OPTIONS/detect_leaks=1/detect_leaks=0}" \
  python3 -m pytest -q -p no:cacheprovider -n "$JOBS" --dist loadgroup --durations=25 "${suites[@]}" 2>&1 |
  tee "$LOGS/pytest.log"
rc=${PIPESTATUS[0]}
set -e
# pytest exits 5 when it collected nothing: that is a failure here, not a pass.
[ "$rc" -eq 0 ] || status=1

# The portable paths of src/platform (what macOS and other systems run instead of memfd, pidfd,
# MAP_POPULATE, ...; docs/platforms.md) forced on Linux, so a defect in a fallback fails here. A build of
# its own, without sanitizers (-O1, no debug info: it compiles fast), of gpuemu and the unit tests of
# the layers that use the platform layer; then those tests and the pytest files that start processes,
# share files with warm workers and run the daemon.
PORTABLE=${GPUEMU_PORTABLE_BUILD_DIR:-build-portable}
PORTABLE_PYTEST=(python/tests/test_input_files.py python/tests/test_worker.py python/tests/test_client_daemon.py
  tests/e2e/test_input_mutation.py tests/e2e/test_worker_lifetime.py tests/e2e/test_script_failures.py
  tests/e2e/test_cases_started_ahead.py tests/e2e/test_daemon.py tests/e2e/test_attest_cli.py)
echo "test: portable platform paths ($PORTABLE: -DGPUEMU_PORTABLE_PLATFORM=ON; ctest -R 'unit_(platform|wire|proc|daemon)', pytest ${#PORTABLE_PYTEST[@]} files)" >&2
set +e
{
  cmake -S . -B "$PORTABLE" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG=-O1 -DCMAKE_CXX_FLAGS_DEBUG=-O1 \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 -DGPUEMU_UNITY=ON -DGPUEMU_WERROR=ON \
    -DGPUEMU_PORTABLE_PLATFORM=ON "${launcher[@]}" >/dev/null &&
    cmake --build "$PORTABLE" -j "$JOBS" --target gpuemu unit_platform unit_wire unit_proc unit_daemon
} 2>&1 | tee "$LOGS/portable-build.log"
rc=${PIPESTATUS[0]}
if [ "$rc" -eq 0 ]; then
  ctest --test-dir "$PORTABLE" -R 'unit_(platform|wire|proc|daemon)' --output-on-failure -j "$JOBS" 2>&1 |
    tee "$LOGS/portable-ctest.log"
  grep -q "100% tests passed" "$LOGS/portable-ctest.log" || status=1
  GPUEMU_BIN="$ROOT/$PORTABLE/gpuemu" python3 -m pytest -q -p no:cacheprovider -n "$JOBS" --dist loadgroup \
    "${PORTABLE_PYTEST[@]}" 2>&1 | tee "$LOGS/portable-pytest.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
else
  status=1
fi
set -e

# The macOS cross-compile (docs/platforms.md, "macOS: cross-compiled with zig"): every source file
# compiles with -Werror against macOS's headers and gpuemu links as a Mach-O executable, for
# x86_64-macos and aarch64-macos. Only the gpuemu target, -O0 without debug info, unity batches: both
# targets take 13 s with ~/.cache/zig and its ccache (~/.cache/gpuemu/ccache-macos) kept from an
# earlier run, plus about 8 s of CPU per unity batch (of 24) a change reaches; 8 minutes with
# neither cache (zig builds libc++ per target; docs/platforms.md).
echo "test: macOS cross-compile (scripts/cross-macos.sh: x86_64-macos and aarch64-macos with zig, build-cross)" >&2
set +e
GPUEMU_JOBS=$JOBS scripts/cross-macos.sh 2>&1 | tee "$LOGS/cross-macos.log"
rc=${PIPESTATUS[0]}
set -e
[ "$rc" -eq 0 ] || status=1

# The static binary is also the user's build: Release (-O3), CMake's default flags, GPUEMU_WERROR off
# (GCC reports more, and some false, warnings at -O3; they must not break it). A failed build fails
# the suite; its warnings are counted in the summary.
echo "test: static binary (scripts/test-static.sh: build-static/gpuemu, Release; chroot and debootstrap tests)" >&2
set +e
scripts/test-static.sh 2>&1 | tee "$LOGS/static.log"
rc=${PIPESTATUS[0]}
set -e
[ "$rc" -eq 0 ] || status=1
# That build is GCC's look at every source file, so GCC's warnings are held to zero here, but for the
# two families GCC 12 reports falsely inside libstdc++ at -O3 (-Wrestrict, -Wstringop-overflow: GCC
# bugs 105329 and 105651, docs/static-build.md); the linker's notes on glibc's NSS calls are not
# compiler warnings.
unexpected=$(grep -E "warning: .*\[-W" "$LOGS/static.log" | grep -vE "\[-W(restrict|stringop-overflow=?)\]" || true)
if [ -n "$unexpected" ]; then
  echo "test: GCC warns in the Release build (fix them; only GCC 12's -O3 false positives are allowed):" >&2
  echo "$unexpected" >&2
  status=1
fi

if [ -x tests/action/run.sh ]; then
  echo "test: workflow lint (actionlint) and action metadata" >&2
  tests/action/run.sh 2>&1 | tee "$LOGS/action.log" || status=1
fi

echo "test: parser harnesses (libFuzzer, scripts/parser-harnesses.sh)" >&2
set +e
scripts/parser-harnesses.sh 2>&1 | tee "$LOGS/parser-harnesses.log"
rc=${PIPESTATUS[0]}
set -e
[ "$rc" -eq 0 ] || status=1

if [ -f vscode/package.json ]; then
  echo "test: VS Code extension (node --test)" >&2
  (cd vscode && npm ci --silent --no-audit --no-fund && npm test) 2>&1 | tee "$LOGS/node.log" || status=1
fi

# The runners' own summary lines, last, so a run that tested nothing is visible at a glance.
echo
echo "== summary =="
grep -E "tests passed|tests failed" "$LOGS/ctest.log" | tail -1 || echo "ctest: no summary (build or run failed)"
echo "portable paths ($PORTABLE): ctest: $(grep -E "tests passed|tests failed" "$LOGS/portable-ctest.log" 2>/dev/null | tail -1 || true); pytest: $(tail -n 1 "$LOGS/portable-pytest.log" 2>/dev/null || echo "not run (build failed)")"
# Its last line: the targets that linked and failed, or what stopped it.
tail -n 1 "$LOGS/cross-macos.log"
echo "static (pytest tests/static): $(tail -n 1 "$LOGS/static.log")"
grep -E "^harness_[a-z_]+: " "$LOGS/parser-harnesses.log" || echo "parser harnesses: no summary (build or run failed)"
echo "release build (build-static/gpuemu, -O3): $(grep -c "warning:" "$LOGS/static.log" || true) warning(s)$([ -x build-static/gpuemu ] || echo ", NOT BUILT")"
tail -n 1 "$LOGS/pytest.log"
[ -f "$LOGS/node.log" ] && grep -E "^# (pass|fail|tests)" "$LOGS/node.log" | tail -3
exit $status
