#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/harness/ with clang-19 (ASan/UBSan) in build-harness and runs each for
# a bounded time from seed corpora taken from the repo (docs/parser-harnesses.md). Exits 1 on any crash.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

BUILD=${GPUEMU_HARNESS_BUILD_DIR:-build-harness}
# 25 s each: on 2 cores five harnesses run in three rounds (75 s), four at 30 s took two (60 s).
SECONDS_EACH=${GPUEMU_HARNESS_SECONDS:-25}
JOBS=${GPUEMU_JOBS:-$(nproc)}
HARNESSES=(harness_config harness_script_reply harness_ipc harness_requests harness_ptx)
if [ $# -gt 0 ]; then HARNESSES=("$@"); fi

# libFuzzer ships with clang's runtime libraries (clang-19: scripts/install-deps.sh --clang).
scripts/install-deps.sh --clang

echo "parser-harnesses: building ${HARNESSES[*]} in $BUILD (clang-19, libFuzzer, ASan/UBSan)" >&2
launcher=()  # ccache when installed (install-deps.sh --clang): a rerun compiles little
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang-19 \
  -DCMAKE_CXX_COMPILER=clang++-19 -DGPUEMU_PARSER_HARNESSES=ON -DGPUEMU_UNITY=ON -DGPUEMU_BUILD_TESTS=OFF -DGPUEMU_WERROR=ON \
  "${launcher[@]}" >/dev/null
cmake --build "$BUILD" -j "$JOBS" --target "${HARNESSES[@]}"

# Seeds: copied from the repo on every run into the harness's working corpus, which keeps what
# earlier runs found (libFuzzer adds new inputs to the first corpus directory).
CORPUS="$ROOT/$BUILD/corpus"
ARTIFACTS="$ROOT/$BUILD/artifacts"
mkdir -p "$ARTIFACTS"
seed() {
  local name=$1
  mkdir -p "$CORPUS/$name"
  case $name in
    harness_config)
      for f in examples/gpuemu.toml policies/*.toml $(find tests/fixtures -name '*.toml'); do
        cp "$f" "$CORPUS/$name/seed-$(echo "$f" | tr '/' '_')"
      done ;;
    harness_ptx)
      for f in tests/kernels/*.ptx; do cp "$f" "$CORPUS/$name/seed-$(basename "$f")"; done ;;
    harness_ipc)
      # The daemon's test vectors (good and bad messages), and warm-worker result frames.
      python3 - "$CORPUS/$name" <<'PY'
import json, struct, sys
out = sys.argv[1]
vectors = json.load(open("tests/vectors/protocol/messages.json"))
for group in ("good", "bad", "bad_requests"):
    for i, v in enumerate(vectors.get(group, [])):
        if isinstance(v, dict) and "hex" in v:
            open(f"{out}/seed-{group}-{i}", "wb").write(bytes.fromhex(v["hex"]))
def frame(header, payload=b""):
    h = json.dumps(header).encode()
    return b"GEMU" + struct.pack("<IIQ", 1, len(h), len(payload)) + h + payload
data = struct.pack("<6f", 1, 2, 3, 4, 5, 6)
open(f"{out}/seed-worker-result", "wb").write(frame({"type": "result", "tensors": [
    {"name": "out", "dtype": "float32", "shape": [2, 3], "strides": [3, 1], "offset": 0, "nbytes": 24}]}, data))
open(f"{out}/seed-worker-strided", "wb").write(frame({"type": "result", "tensors": [
    {"name": "a", "dtype": "float16", "shape": [3], "strides": [2], "offset": 0, "nbytes": 12},
    {"name": "b", "dtype": "int64", "shape": [], "offset": 16, "nbytes": 8}]}, data))
open(f"{out}/seed-worker-ready", "wb").write(frame({"type": "ready", "pid": 1}))
PY
      ;;
    harness_requests)
      # Requests of every type against the harness's project, and the protocol's request vectors.
      # Its corpus starts from the seeds on every run: its inputs run scripts (tens of ms each), and
      # libFuzzer replays the whole corpus before -max_total_time applies, so a corpus kept across
      # runs would make every run longer than the last.
      rm -rf "${CORPUS:?}/$name"
      mkdir -p "$CORPUS/$name"
      python3 tests/harness/requests_seeds.py "$CORPUS/$name" ;;
    harness_script_reply)
      # Replies as docs/script-protocol.md shows them: one tensor, named outputs, strides.
      python3 - "$CORPUS/$name" <<'PY'
import base64, json, struct, sys
out = sys.argv[1]
b64 = lambda b: base64.b64encode(b).decode()
replies = [
    {"shape": [2, 3], "dtype": "float64", "data": b64(struct.pack("<6d", 1, 2, 3, 4, 5, 6))},
    {"outputs": {"values": {"shape": [4], "dtype": "float32", "data": b64(struct.pack("<4f", 1, 2, 3, 4))},
                 "indices": {"shape": [4], "dtype": "int64", "data": b64(struct.pack("<4q", 0, 1, 2, 3))}}},
    {"shape": [2, 2], "strides": [1, 2], "dtype": "float16", "data": b64(bytes(8))},
    {"shape": [], "dtype": "bool", "data": b64(b"\x01"), "extra": [1, {"x": None}]},
    {"shape": [3], "dtype": "bfloat16", "data": b64(bytes(6)), "strides": None},
]
for i, r in enumerate(replies):
    open(f"{out}/seed-{i}", "w").write(json.dumps(r) + "\n")
PY
      ;;
  esac
}

# One harness: its summary line goes to $BUILD/<name>.summary; a crash also prints the log's tail.
run_harness() {
  local name=$1 log="$ROOT/$BUILD/$1.log" rc runs took reproducer
  set +e
  dict=()
  [ -f "tests/harness/$name.dict" ] && dict=(-dict="$ROOT/tests/harness/$name.dict")
  "$ROOT/$BUILD/tests/harness/$name" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
    "${dict[@]}" -print_final_stats=1 -artifact_prefix="$ARTIFACTS/$name-" "$CORPUS/$name" >"$log" 2>&1
  rc=$?
  set -e
  runs=$(grep -oE '^stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1 || true)
  took=$(grep -oE '^Done [0-9]+ runs in [0-9]+ second' "$log" | grep -oE 'in [0-9]+' | grep -oE '[0-9]+' | tail -1 || true)
  if [ "$rc" -eq 0 ]; then
    echo "$name: ${runs:-?} runs in ${took:-$SECONDS_EACH} s, no crash" >"$ROOT/$BUILD/$name.summary"
    return 0
  fi
  tail -n 60 "$log" >&2
  reproducer=$(grep -oE 'Test unit written to .*' "$log" | sed 's/^Test unit written to //' | tail -1 || true)
  echo "$name: CRASH (exit $rc) after ${runs:-?} runs; reproducer ${reproducer:-none written, see $log}; rerun: $BUILD/tests/harness/$name ${reproducer:-}" \
    >"$ROOT/$BUILD/$name.summary"
  return 1
}

# The harnesses are single-threaded: run up to $JOBS at once (the CI's wall time, not fewer runs per harness).
status=0
running=0
for name in "${HARNESSES[@]}"; do
  seed "$name"
  rm -f "$ROOT/$BUILD/$name.summary"
  echo "parser-harnesses: running $name for ${SECONDS_EACH}s" >&2
  run_harness "$name" &
  running=$((running + 1))
  if [ "$running" -ge "$JOBS" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
done
while [ "$running" -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done

echo
echo "== parser harness summary =="
for name in "${HARNESSES[@]}"; do
  cat "$ROOT/$BUILD/$name.summary" 2>/dev/null || { echo "$name: no summary (the harness did not finish)"; status=1; }
done
exit $status
