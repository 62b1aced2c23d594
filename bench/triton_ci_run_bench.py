#!/usr/bin/env python3
# Benchmark (o): `gpuemu ci run` on examples/triton end to end, this build against an older one (issue 39's
# 5x target), in turn, each in a fresh copy of the project with its own GPUEMU_HOME; verdicts compared.
"""(o) `gpuemu ci run` on examples/triton, end to end: this checkout against a baseline checkout.

python3 bench/triton_ci_run_bench.py --baseline DIR [--runs N]

DIR is another checkout with its own build (DIR/build/gpuemu, which finds DIR/python itself), e.g.
a worktree of 8f37e81, the commit before issue 39. The two run in turn (A B A B ...), after one
warm-up each, so the machine's drift hits both; each run copies examples/triton from its own checkout
into a fresh folder with a fresh GPUEMU_HOME (no store, no baseline left by the run before). Reports the
median wall time and CPU time (the process and every child it waited for: fork servers, workers) of
each, their ratio, and whether every op got the same verdict (PASS/FAIL) in every run of both.
Target: baseline / this >= 5 (wall, median)."""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_lib import cpu_description  # noqa: E402  (bench/ is not a package)

REPO = HERE.parent


def one_run(checkout: Path) -> tuple[float, float, dict[str, str]]:
    """Wall seconds, CPU seconds and {op: PASS|FAIL} of one `ci run` of checkout's examples/triton."""
    binary = checkout / "build" / "gpuemu"
    with tempfile.TemporaryDirectory(prefix="gpuemu-ci-bench-") as tmp:
        project = Path(tmp) / "triton"
        shutil.copytree(checkout / "examples" / "triton", project)
        env = {k: v for k, v in os.environ.items() if not k.startswith("GPUEMU_")}
        env["GPUEMU_HOME"] = str(Path(tmp) / "home")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        proc = subprocess.run([str(binary), "ci", "run"], cwd=project, env=env, capture_output=True, text=True,
                              timeout=1800)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        sys.exit(f"bench: {binary} ci run exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    verdicts = {}
    for line in proc.stdout.splitlines():
        word, _, rest = line.partition(" ")
        if word in ("PASS", "FAIL"):
            verdicts[rest.split(":")[0]] = word
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, verdicts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", type=Path, required=True, help="a checkout with its own build/gpuemu")
    parser.add_argument("--runs", type=int, default=3, help="counted runs of each (default 3)")
    args = parser.parse_args()
    sides = {"this": REPO, "baseline": args.baseline.resolve()}
    for name, checkout in sides.items():
        if not (checkout / "build" / "gpuemu").exists():
            sys.exit(f"bench: no {checkout}/build/gpuemu: build the {name} checkout first (cmake --build build)")
    print(f"(o) ci run on examples/triton | {cpu_description()} | load {os.getloadavg()[0]:.2f}", flush=True)
    walls = {name: [] for name in sides}
    cpus = {name: [] for name in sides}
    verdicts: dict[str, set] = {}
    for round_ in range(args.runs + 1):  # the first round warms the page cache and pip's bytecode
        for name, checkout in sides.items():
            wall, cpu, seen = one_run(checkout)
            for op, verdict in seen.items():
                verdicts.setdefault(op, set()).add(verdict)
            if round_ > 0:
                walls[name].append(wall)
                cpus[name].append(cpu)
            print(f"  {name:8} run {round_}: {wall:6.1f} s wall, {cpu:6.1f} s CPU, "
                  f"{sum(v == 'FAIL' for v in seen.values())} of {len(seen)} ops failed", flush=True)
    med = {name: (statistics.median(walls[name]), statistics.median(cpus[name])) for name in sides}
    differing = sorted(op for op, seen in verdicts.items() if len(seen) > 1)
    print(f"this: {med['this'][0]:.1f} s wall, {med['this'][1]:.1f} s CPU; baseline: {med['baseline'][0]:.1f} s "
          f"wall, {med['baseline'][1]:.1f} s CPU (medians of {args.runs})")
    print(f"baseline / this: {med['baseline'][0] / med['this'][0]:.1f}x wall, "
          f"{med['baseline'][1] / med['this'][1]:.1f}x CPU (target >= 5x wall); load {os.getloadavg()[0]:.2f}")
    print(f"verdicts: {len(verdicts)} ops, " +
          ("the same in every run of both" if not differing else f"differ for {', '.join(differing)}"))
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
