# Shared pieces of the benchmarks: where the binary and the repo are, timing over repeated runs
# (min and median), temporary copies of the example project, and the result table.
"""Helpers for bench/run.py; see docs/performance.md for what each benchmark measures."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
HERE_SHARE = REPO / "bench" / "share_project"  # the numpy ops of benchmark (i)


def gpuemu_bin() -> Path:
    # Absolute: the benchmarks run it from their own project folders (a relative path would not resolve there).
    path = Path(os.environ.get("GPUEMU_BIN") or REPO / "build" / "gpuemu").resolve()
    if not path.exists():
        sys.exit(f"bench: no gpuemu binary at {path}: build it (scripts/setup.sh) or set GPUEMU_BIN")
    return path


def cpu_description() -> str:
    """What lscpu calls the CPU, with its family and model, and the widest vector set gpuemu's kernels
    use on it (util/cpu_isa.hpp): the numbers are that CPU's."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown (lscpu did not run)"
    fields = {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in out.splitlines())}
    flags = set(fields.get("Flags", "").split())
    isa = ("AVX-512" if {"avx512f", "avx512vl", "avx512dq", "avx512bw"} <= flags
           else "AVX2" if "avx2" in flags else "baseline x86-64")
    return (f"{fields.get('Model name', 'unknown')}, family {fields.get('CPU family', '?')} model "
            f"{fields.get('Model', '?')}, {fields.get('CPU(s)', '?')} CPUs, {isa}")


def python_env(home: Path) -> dict[str, str]:
    """The environment every benchmark runs gpuemu and its clients in: its own GPUEMU_HOME, the
    in-tree package importable, this interpreter for scripts and workers."""
    env = dict(os.environ)
    env["GPUEMU_HOME"] = str(home)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(REPO / "python"), env.get("PYTHONPATH", "")] if p)
    env.setdefault("GPUEMU_PYTHON", sys.executable)
    return env


@dataclass
class Timing:
    """Seconds of each repeat; quote the median, the min shows the best the machine gave."""

    samples: list[float] = field(default_factory=list)

    @property
    def min(self) -> float:
        return min(self.samples)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) by nearest rank, as latency reports quote it."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(round(q / 100.0 * len(ordered) + 0.5))))
    return ordered[rank - 1]


def run_checked(cmd: list[str], env: dict, cwd: Path, ok_codes=(0,),
                timeout: float = 1800) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode not in ok_codes:
        sys.exit(f"bench: `{' '.join(cmd)}` exited {proc.returncode}\nstdout: {proc.stdout[-2000:]}\n"
                 f"stderr: {proc.stderr[-4000:]}")
    return proc


def timed(cmd: list[str], env: dict, cwd: Path, ok_codes=(0,)) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = run_checked(cmd, env, cwd, ok_codes)
    return time.perf_counter() - start, proc


def example_project(root: Path, ops_toml: str, validation: str = "") -> Path:
    """A copy of the example project's kernels and references under root with the given ops;
    returns the gpuemu.toml path."""
    root.mkdir(parents=True, exist_ok=True)
    for sub in ("kernels", "refs"):
        if not (root / sub).exists():
            shutil.copytree(EXAMPLES / sub, root / sub)
    config = root / "gpuemu.toml"
    config.write_text(f"""[project]
name = "bench"

[validation]
dtypes = ["float32", "float16", "bfloat16"]
check_nan = true
check_inf = true
seed = 12345
timeout = 60
{validation}
{ops_toml}""")
    return config


def softmax_op(persistent: bool, dims: str = "M = [1, 8], N = [1, 64]") -> str:
    """The example softmax op (examples/gpuemu.toml) at small shapes, warm or spawned per case."""
    return f"""
[[ops]]
name = "softmax"
persistent = {str(persistent).lower()}
op_script = "kernels/softmax.py"
reference = "refs/softmax_ref.py"
invariants = ["shape_preserved", "non_negative", "normalized"]

[ops.schema]
dims = {{ {dims} }}
inputs = {{ x = ["M", "N"] }}
output = ["M", "N"]

[ops.inputs.x]
domain = [-30.0, 30.0]

[ops.tolerances]
float32 = {{ atol = 1e-6, rtol = 1e-5 }}
float16 = {{ atol = 1e-5, rtol = 2e-3 }}
bfloat16 = {{ atol = 1e-5, rtol = 1e-2 }}
"""


@dataclass
class Row:
    """One line of the result table."""

    bench: str
    measured: str
    baseline: str
    ratio: float | None
    target: str = ""
    met: bool | None = None
    note: str = ""


def fmt_rate(x: float, unit: str) -> str:
    return f"{x:,.1f} {unit}" if x < 100 else f"{x:,.0f} {unit}"


def fmt_bytes_rate(bytes_per_sec: float) -> str:
    return f"{bytes_per_sec / 2**30:.2f} GiB/s"


def print_table(rows: list[Row], out=sys.stdout) -> None:
    headers = ["benchmark", "measured", "baseline (same run)", "ratio", "target", "met"]
    cells = [[r.bench, r.measured, r.baseline, "" if r.ratio is None else f"{r.ratio:.3g}x", r.target,
              "" if r.met is None else ("yes" if r.met else "NO")] for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h) for i, h in enumerate(headers)]
    line = " | ".join(h.ljust(w) for h, w in zip(headers, widths))
    print(line, file=out)
    print("-+-".join("-" * w for w in widths), file=out)
    for c in cells:
        print(" | ".join(v.ljust(w) for v, w in zip(c, widths)), file=out)
    notes = [f"- {r.bench}: {r.note}" for r in rows if r.note]
    if notes:
        print("\n" + "\n".join(notes), file=out)


def log(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)
