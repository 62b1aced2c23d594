# Issue 40's survey, reproducible: 129 FlagGems ops (bench/flag_gems_survey_ops.py) at fp32/fp16/bf16 under
# gpuemu's Triton layers as its worker installs them, against torch in float64; each op in its own process.
"""python3 bench/flag_gems_survey.py [--jobs 2] [--timeout 60] [--ops a,b] [--json FILE]

A server process (this file with ``--serve``) starts with an op worker's environment under
``interpreter_cuda_shim = true`` (TRITON_INTERPRET=1, GPUEMU_TRITON_CUDA_SHIM=1, GPUEMU_SANITIZE=1,
GPUEMU_REQUIRE_LAUNCH=1, GEMS_VENDOR=nvidia), arms gpuemu.frameworks.triton_hook, imports FlagGems once
and forks a child per op (as gpuemu's fork server forks workers). The child calls the op through a
pytorch Converter (the worker's conversion, launch count and CUDA-refusal path), its reference through a
reference Converter (inputs widened to float64), and compares with gpuemu's pass rule and default
tolerances. A child that outlives --timeout is sent SIGUSR1 (the worker's "stopped at FILE:LINE"
handler), then killed; the dtypes it did not reach run in a fresh child.

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
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import zlib

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
    from gpuemu import worker  # lazy: the worker's own "stopped at" handler
    from gpuemu.frameworks import AdapterSettings, Converter

    signal.signal(signal.SIGUSR1, worker._say_where_stopped)
    converters = tuple(Converter(AdapterSettings(framework="pytorch", device="cpu", role=role))
                       for role in ("op", "reference"))
    (_, set_name, call, reference), = [o for o in OPS if o[0] == op]
    for dtype in dtypes:
        print(json.dumps({"op": op, "dtype": dtype, "started": True}), flush=True)
        row = _one_call(op, set_name, call, reference, dtype, converters)
        print(json.dumps({"op": op, "dtype": dtype, **row}), flush=True)
    return 0


# ---- server: FlagGems imported once under the layers, then one forked child per op ----

def _in_child(op: str, dtypes: list[str], out: str, err: str) -> None:
    """In the forked child: stdout and stderr to the job's files, the op's calls, exit. Never returns."""
    code = 1
    try:
        for path, fd in ((out, 1), (err, 2)):
            target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(target, fd)
            os.close(target)
        code = child(op, dtypes)
    except BaseException:  # noqa: BLE001  (the driver reads the traceback as the crash's detail)
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _collect(job: dict, status: int, timeout: float, rows: list[dict]) -> list[str]:
    """The finished child's rows; a hang or crash row for the dtype it was on; the dtypes it did not reach."""
    pending, started = list(job["dtypes"]), None
    for line in pathlib.Path(job["out"]).read_text().splitlines():
        row = json.loads(line)
        if row.get("started"):
            started = row["dtype"]
        else:
            rows.append(row)
            pending.remove(row["dtype"])
            started = None
    if not pending:
        return []
    stuck = started or pending[0]
    err = pathlib.Path(job["err"]).read_text(errors="replace")
    if job["hung"]:
        where = re.search(r"gpuemu: stopped at (.*)", err)
        detail = f"no answer in {timeout:.0f} s" + (f"; stopped at {where.group(1)}" if where else "")
        rows.append({"op": job["op"], "dtype": stuck, "class": "hang", "detail": detail})
    else:
        how = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit {os.waitstatus_to_exitcode(status)}"
        tail = " | ".join(err.strip().splitlines()[-3:])
        rows.append({"op": job["op"], "dtype": stuck, "class": "crash", "detail": f"{how}: {tail}"[:400]})
    return [d for d in pending if d != stuck]


def serve(names: list[str], jobs: int, timeout: float) -> list[dict]:
    """Each op in its own forked child, at most `jobs` at once, as gpuemu's fork server forks workers; a
    child past `timeout` is asked where it is (SIGUSR1: the worker's "stopped at"), then killed."""
    from gpuemu.frameworks import triton_hook  # lazy: the server's environment is set before it starts

    triton_hook.arm()
    import flag_gems  # noqa: F401  (lazy: after arming, as a worker imports the op's library)

    scratch = tempfile.mkdtemp(prefix="flag-gems-survey-")
    queue = [(op, list(DTYPES)) for op in names]
    running: dict[int, dict] = {}
    rows: list[dict] = []
    while queue or running:
        while queue and len(running) < jobs:
            op, dtypes = queue.pop(0)
            out, err = (os.path.join(scratch, f"{op}.{len(dtypes)}.{kind}") for kind in ("out", "err"))
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _in_child(op, dtypes, out, err)
            running[pid] = {"op": op, "dtypes": dtypes, "out": out, "err": err, "hung": False,
                            "deadline": time.monotonic() + timeout}
        for pid, job in list(running.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done == 0:
                if time.monotonic() > job["deadline"]:
                    os.kill(pid, signal.SIGKILL if job["hung"] else signal.SIGUSR1)
                    job["hung"], job["deadline"] = True, time.monotonic() + 2
                continue
            del running[pid]
            rest = _collect(job, status, timeout, rows)
            if rest:
                queue.insert(0, (job["op"], rest))
        time.sleep(0.02)
    shutil.rmtree(scratch, ignore_errors=True)
    return rows


# ---- driver ----

def _server(names: list[str], args: argparse.Namespace, extra_env: dict) -> list[dict]:
    """One server process over `names`, its environment an op worker's (set before Python starts)."""
    # this checkout's gpuemu package first, as gpuemu puts its own package on a worker's PYTHONPATH
    path = os.pathsep.join(filter(None, [str(HERE.parent / "python"), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, **CHILD_ENV, "PYTHONPATH": path, **extra_env}
    with tempfile.NamedTemporaryFile(suffix=".json") as result:
        subprocess.run([sys.executable, __file__, "--serve", "--ops", ",".join(names), "--jobs", str(args.jobs),
                        "--timeout", str(args.timeout), "--json", result.name], env=env, check=True)
        return json.loads(pathlib.Path(result.name).read_text())


def survey(names: list[str], args: argparse.Namespace) -> list[dict]:
    """Every call; a mismatch or op error that goes away without the sanitizer is its finding."""
    rows = _server(names, args, {})
    again = sorted({r["op"] for r in rows if r["class"] in ("mismatch", "op_error")})
    if again:
        plain = {(r["op"], r["dtype"]): r["class"] for r in _server(again, args, {"GPUEMU_SANITIZE": "0"})}
        for row in rows:
            if row["class"] in ("mismatch", "op_error") and plain.get((row["op"], row["dtype"])) == "match":
                row["class"] = "sanitizer_finding"
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
    parser.add_argument("--jobs", type=int, default=2, help="ops run at once")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per op (its three calls)")
    parser.add_argument("--ops", default="", help="comma-separated op names (default: all)")
    parser.add_argument("--json", default="", help="also write the rows to this file")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    names = [o[0] for o in OPS]
    chosen = [n for n in args.ops.split(",") if n] or names
    unknown = sorted(set(chosen) - set(names))
    if unknown:
        parser.error(f"unknown ops {', '.join(unknown)}; the survey's ops are in bench/flag_gems_survey_ops.py")
    if args.serve:
        pathlib.Path(args.json).write_text(json.dumps(serve(chosen, max(1, args.jobs), args.timeout)))
        return 0
    started = time.perf_counter()
    rows = survey(chosen, args)
    print(_table(rows))
    print(headline(rows))
    print(f"{len(chosen)} ops, {len(rows)} calls in {time.perf_counter() - started:.0f} s")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
