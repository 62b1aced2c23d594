# Issue 40's survey, reproducible: 129 FlagGems ops (bench/flag_gems_survey_ops.py) at fp32/fp16/bf16 under
# gpuemu's Triton layers as its worker installs them, against torch in float64; each op in its own process.
"""python3 bench/flag_gems_survey.py [--jobs 2] [--timeout 60] [--ops a,b] [--json FILE]

Every op runs in a child process (this file with ``--child``) whose environment is an op worker's with
``interpreter_cuda_shim = true`` (TRITON_INTERPRET=1, GPUEMU_TRITON_CUDA_SHIM=1, GPUEMU_SANITIZE=1,
GPUEMU_REQUIRE_LAUNCH=1, GEMS_VENDOR=nvidia); it arms gpuemu.frameworks.triton_hook before importing
anything, calls the op through a pytorch Converter (the worker's conversion, launch count and CUDA-refusal
path), its reference through a reference Converter (inputs widened to float64) and compares with
gpuemu's pass rule and default tolerances. A child that outlives --timeout is sent SIGUSR1 (the worker's
"stopped at FILE:LINE" handler), then killed; the dtypes it did not reach run in a fresh child.

Each call is one class: match; sanitizer_finding (a mismatch or error that goes away with
GPUEMU_SANITIZE=0: the kernel reads masked-off lanes loaded without other=, which tl.load documents as
undefined, or depends on program order); mismatch; triton_refused (Triton 3.9's tl.make_block_ptr refuses
it, on a GPU too); cuda_assert (the library's own CUDA check: interpreter_unsupported); not_launched (the
library fell back to torch, e.g. `if not x.is_cuda`: kernel_not_launched); op_error; reference_error;
hang; crash. The headline is matched / calls neither the installed Triton nor the library's CUDA checks
refuse, and matched / all calls (docs/frameworks.md, "Triton libraries").
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time
import zlib
from concurrent.futures import ThreadPoolExecutor

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from flag_gems_survey_ops import INPUT_SETS, OPS  # noqa: E402

DTYPES = ("float32", "float16", "bfloat16")
SEED = 5
CHILD_ENV = {"TRITON_INTERPRET": "1", "GPUEMU_TRITON_CUDA_SHIM": "1", "GPUEMU_SANITIZE": "1",
             "GPUEMU_REQUIRE_LAUNCH": "1", "GEMS_VENDOR": "nvidia", "OMP_NUM_THREADS": "1",
             "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
CLASSES = ("match", "sanitizer_finding", "mismatch", "triton_refused", "cuda_assert", "not_launched", "op_error",
           "reference_error", "hang", "crash")
# Not run on a CPU by the library or the installed Triton: Triton 3.9 refuses tl.make_block_ptr (on a GPU too);
# the library's own CUDA check raises (interpreter_unsupported) or falls back to torch (kernel_not_launched).
REFUSED = ("triton_refused", "cuda_assert", "not_launched")
BLOCK_POINTERS = "Block pointers have been removed"


# ---- child: one op, the given dtypes, one JSON line per call on stdout ----

def _inputs(set_name: str, dtype: str, op: str) -> dict:
    """{name: (gpuemu storage array, dtype)}: the same values at every dtype (rounded to it)."""
    import numpy as np  # lazy: the driver never needs numpy
    from gpuemu._internal.core.dtypes import to_bf16_bits

    rng = np.random.default_rng([SEED, zlib.crc32(op.encode())])
    made = {}
    for name, spec in INPUT_SETS[set_name].items():
        shape, (low, high), kind = (*spec, "float")[:3]
        if kind == "int64":
            made[name] = (rng.integers(low, high + 1, size=shape).astype(np.int64), "int64")
        elif kind == "perm":
            made[name] = (rng.permutation(high + 1)[: shape[0]].astype(np.int64), "int64")
        else:
            values = rng.uniform(low, high, size=shape)
            storage = to_bf16_bits(values) if dtype == "bfloat16" else values.astype(dtype)
            made[name] = (storage, dtype)
    return made


def _classify_error(exc: BaseException) -> tuple[str, str]:
    from gpuemu.errors import InterpreterUnsupportedError, KernelNotLaunchedError  # lazy: child only

    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, InterpreterUnsupportedError):
        return "cuda_assert", text
    if isinstance(exc, KernelNotLaunchedError):
        return "not_launched", text
    if BLOCK_POINTERS in text:
        return "triton_refused", text
    return "op_error", text


def _where(exc: BaseException) -> str:
    """The innermost flag_gems frame of the traceback, else the innermost frame."""
    import traceback  # lazy: child only

    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if "flag_gems" in f.filename] or frames
    return f" at {mine[-1].filename.split('site-packages/')[-1]}:{mine[-1].lineno}" if mine else ""


def _one_call(op: str, set_name: str, call: str, reference: str | None, dtype: str, converters) -> dict:
    from gpuemu import torch_library  # lazy: after triton_hook.arm()
    from gpuemu._internal.core.compare import compare_outputs
    from gpuemu.tolerances import ToleranceConfig

    mine, theirs = converters
    storages = _inputs(set_name, dtype, op)
    kwargs = {"call": call.replace("G.", "flag_gems.ops."), "reference": reference}
    seed = zlib.crc32(f"{op}/{dtype}".encode())
    try:
        out = mine.call(torch_library.op, mine.inputs(storages, op), kwargs, dtype, seed)
        actual = dict(mine.outputs(out, op))
    except Exception as exc:  # noqa: BLE001  (every failure of the op is a class of the survey)
        kind, text = _classify_error(exc)
        return {"class": kind, "detail": (text + _where(exc))[:400]}
    try:
        ref = theirs.call(torch_library.reference, theirs.inputs(storages, op), kwargs, dtype, seed)
        expected = dict(theirs.outputs(ref, op))
    except Exception as exc:  # noqa: BLE001
        return {"class": "reference_error", "detail": f"{type(exc).__name__}: {exc}"[:400]}
    verdict = compare_outputs(actual, expected, ToleranceConfig.for_dtype(dtype))
    if verdict.passed:
        return {"class": "match", "detail": ""}
    return {"class": "mismatch", "detail": f"{verdict.kind}: {verdict.message}"[:400]}


def child(op: str, dtypes: list[str]) -> int:
    from gpuemu import worker  # lazy: the worker's own "stopped at" handler and Triton hook
    from gpuemu.frameworks import AdapterSettings, Converter, triton_hook

    signal.signal(signal.SIGUSR1, worker._say_where_stopped)
    triton_hook.arm()
    converters = tuple(Converter(AdapterSettings(framework="pytorch", device="cpu", role=role))
                       for role in ("op", "reference"))
    (_, set_name, call, reference), = [o for o in OPS if o[0] == op]
    for dtype in dtypes:
        print(json.dumps({"op": op, "dtype": dtype, "started": True}), flush=True)
        row = _one_call(op, set_name, call, reference, dtype, converters)
        print(json.dumps({"op": op, "dtype": dtype, **row}), flush=True)
    return 0


# ---- driver ----

def _run_op(op: str, timeout: float) -> list[dict]:
    """The op's calls; a mismatch or op error that goes away without the sanitizer is its finding."""
    rows = _run_dtypes(op, list(DTYPES), timeout, {})
    again = [r["dtype"] for r in rows if r["class"] in ("mismatch", "op_error")]
    if again:
        unsanitized = {r["dtype"]: r for r in _run_dtypes(op, again, timeout, {"GPUEMU_SANITIZE": "0"})}
        for row in rows:
            if unsanitized.get(row["dtype"], {}).get("class") == "match":
                row["class"] = "sanitizer_finding"
    return rows


def _run_dtypes(op: str, pending: list[str], timeout: float, extra_env: dict) -> list[dict]:
    rows: list[dict] = []
    while pending:
        # this checkout's gpuemu package first, as gpuemu puts its own package on a worker's PYTHONPATH
        path = os.pathsep.join(filter(None, [str(HERE.parent / "python"), os.environ.get("PYTHONPATH")]))
        env = {**os.environ, **CHILD_ENV, "PYTHONPATH": path, **extra_env}
        proc = subprocess.Popen([sys.executable, __file__, "--child", op, "--dtypes", ",".join(pending)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        hung = False
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            hung = True
            proc.send_signal(signal.SIGUSR1)
            time.sleep(2)
            proc.kill()
            stdout, stderr = proc.communicate()
        started = None
        for line in stdout.splitlines():
            row = json.loads(line)
            if row.get("started"):
                started = row["dtype"]
            else:
                rows.append(row)
                pending.remove(row["dtype"])
                started = None
        if not pending:
            break
        stuck = started or pending[0]
        if hung:
            where = re.search(r"gpuemu: stopped at (.*)", stderr)
            detail = f"no answer in {timeout:.0f} s" + (f"; stopped at {where.group(1)}" if where else "")
            rows.append({"op": op, "dtype": stuck, "class": "hang", "detail": detail})
        else:
            tail = " | ".join(stderr.strip().splitlines()[-3:])
            rows.append({"op": op, "dtype": stuck, "class": "crash",
                         "detail": f"exit {proc.returncode}: {tail}"[:400]})
        pending.remove(stuck)
    return rows


def _table(rows: list[dict]) -> str:
    by_op: dict[str, dict] = collections.defaultdict(dict)
    for row in rows:
        by_op[row["op"]][row["dtype"]] = row
    lines = [f"{'op':30} " + " ".join(f"{d:16}" for d in DTYPES) + " detail"]
    for op, _, _, _ in OPS:
        if op not in by_op:
            continue
        calls = by_op[op]
        detail = next((calls[d]["detail"] for d in DTYPES if d in calls and calls[d]["detail"]), "")
        lines.append(f"{op:30} " + " ".join(f"{calls.get(d, {}).get('class', '-'):16}" for d in DTYPES)
                     + f" {detail[:160]}")
    return "\n".join(lines)


def headline(rows: list[dict]) -> str:
    counts = collections.Counter(row["class"] for row in rows)
    runnable = len(rows) - sum(counts[c] for c in REFUSED)
    unsanitized = counts["match"] + counts["sanitizer_finding"]

    def share(n: int) -> str:
        return f"{100.0 * n / runnable:.1f}%" if runnable else "n/a"

    return ("classes: " + ", ".join(f"{c} {counts[c]}" for c in CLASSES) + "\n"
            f"matched {counts['match']} / {runnable} calls not refused by the installed Triton or by the "
            f"library's CUDA checks ({share(counts['match'])}); matched {counts['match']} / {len(rows)} calls in all\n"
            f"without the sanitizer's findings: {unsanitized} / {runnable} ({share(unsanitized)})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per child process")
    parser.add_argument("--ops", default="", help="comma-separated op names (default: all)")
    parser.add_argument("--json", default="", help="also write the rows to this file")
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)
    parser.add_argument("--dtypes", default=",".join(DTYPES), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.dtypes.split(","))
    names = [o[0] for o in OPS]
    chosen = [n for n in args.ops.split(",") if n] or names
    unknown = sorted(set(chosen) - set(names))
    if unknown:
        parser.error(f"unknown ops {', '.join(unknown)}; the survey's ops are in bench/flag_gems_survey_ops.py")
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        rows = [row for op_rows in pool.map(lambda op: _run_op(op, args.timeout), chosen) for row in op_rows]
    print(_table(rows))
    print(headline(rows))
    print(f"{len(chosen)} ops, {len(rows)} calls in {time.perf_counter() - started:.0f} s")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
