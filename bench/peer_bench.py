# Benchmark (j): `gpuemu ci run` of benchmark (i)'s numpy project against the in-process loop a user
# would write instead (bench/peer_loop.py), whole processes in turn (issue 32; docs/performance.md).
"""(j) gpuemu vs the peer loop: wall and CPU of `gpuemu ci run` over the wall and CPU of
`python3 bench/peer_loop.py`, both over the same 264 cases. Target: wall <= 1.0x (stretch 0.8x)."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_lib import HERE_SHARE, Row, log, python_env
from share_bench import numpy_ops_toml

PEER = Path(__file__).resolve().parent / "peer_loop.py"


def run_whole(cmd: list[str], env: dict, cwd: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one whole process and every descendant it waited for (os.wait4's
    accounting: user + system), its output thrown away."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    if proc.returncode != 0:
        sys.exit(f"bench: `{' '.join(cmd)}` exited {proc.returncode}: {err[-3000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def spread(values: list[float], unit: str = "s") -> str:
    return f"min {min(values):.2f} / median {statistics.median(values):.2f} / max {max(values):.2f} {unit}"


def bench_peer(binary: Path, work: Path, quick: bool) -> list[Row]:
    env = python_env(work / "home")
    env.pop("TRITON_INTERPRET", None)
    project = work / "numpy-ops"
    shutil.copytree(HERE_SHARE, project)
    (project / "gpuemu.toml").write_text(numpy_ops_toml(20))
    gpuemu_cmd = [str(binary), "ci", "run", "--out", str(project / "out")]
    peer_cmd = [sys.executable, str(PEER)]
    runs = 2 if quick else 6
    log(f"peer: gpuemu ci run vs the peer loop, {runs} runs each in turn (and one warm-up each)")
    run_whole(gpuemu_cmd, env, project)
    run_whole(peer_cmd, env, project)
    samples: dict[str, list[tuple[float, float]]] = {"gpuemu": [], "peer": []}
    for _ in range(runs):
        samples["gpuemu"].append(run_whole(gpuemu_cmd, env, project))
        samples["peer"].append(run_whole(peer_cmd, env, project))
    # Ratios pair by pair (each gpuemu run against the peer run right after it), so drift in the
    # machine's speed hits both sides of each ratio.
    wall_ratios = [g[0] / p[0] for g, p in zip(samples["gpuemu"], samples["peer"])]
    cpu_ratios = [g[1] / p[1] for g, p in zip(samples["gpuemu"], samples["peer"])]
    g_wall = [w for w, _ in samples["gpuemu"]]
    g_cpu = [c for _, c in samples["gpuemu"]]
    p_wall = [w for w, _ in samples["peer"]]
    p_cpu = [c for _, c in samples["peer"]]
    wall_ratio = statistics.median(wall_ratios)
    cpu_ratio = statistics.median(cpu_ratios)
    return [
        Row("(j) ci run vs peer loop, 12 numpy ops (wall)", f"{statistics.median(g_wall):.2f} s",
            f"{statistics.median(p_wall):.2f} s (peer loop)", wall_ratio, "<= 1.0x (stretch 0.8x)",
            wall_ratio <= 1.0,
            note=f"{runs} runs each in turn, ratio = median of per-pair ratios (range {min(wall_ratios):.2f}-"
                 f"{max(wall_ratios):.2f}x); gpuemu wall {spread(g_wall)}, peer wall {spread(p_wall)}"),
        Row("(j) ci run vs peer loop, 12 numpy ops (CPU)", f"{statistics.median(g_cpu):.2f} s",
            f"{statistics.median(p_cpu):.2f} s (peer loop)", cpu_ratio, "", None,
            note=f"user + system of every process (range {min(cpu_ratios):.2f}-{max(cpu_ratios):.2f}x); "
                 f"gpuemu CPU {spread(g_cpu)}, peer CPU {spread(p_cpu)}"),
    ]
