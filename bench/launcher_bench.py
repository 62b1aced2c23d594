# Benchmark (k): the time from `gpuemu ci run`'s start to its first case on a one-op project when
# python3 is a launcher shim (pyenv here), resolved once per run or started for every process (issue 32).
"""(k) launcher tax: `ci run` start to the op's first call, python3 from PATH (a pyenv shim on the
machines we measure on), against GPUEMU_RESOLVE_PYTHON=0 (every interpreter gpuemu starts on its own
goes through the shim), in turn: the op as a warm callable (its workers are forks of the fork server,
which the shim starts once either way), and as cold scripts (an interpreter per case and role)."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_lib import Row, log, python_env

OPS = """import time

def scale(inputs):
    with open("first_calls.txt", "a") as out:
        out.write(f"{time.monotonic()}\\n")
    return inputs["x"] * 2

def scale_ref(inputs):
    return inputs["x"].astype("float64") * 2
"""

COLD_OP = """import time

from gpuemu.script import serve


def scale(inputs):
    with open("first_calls.txt", "a") as out:
        out.write(f"{time.monotonic()}\\n")
    return inputs["x"] * 2


serve(scale)
"""

COLD_REF = """from gpuemu.script import serve

serve(lambda inputs: inputs["x"].astype("float64") * 2, role="reference")
"""

TOML = """[project]
name = "launcher-bench"

[validation]
dtypes = ["float32"]
seed = 5
test_cases = 1

[ci]
fuzz_iterations = 2

[[ops]]
name = "scale"
op_script = "ops:scale"
reference = "ops:scale_ref"
[ops.schema]
dims = { M = { candidates = [4] }, N = { candidates = [64] } }
inputs = { x = ["M", "N"] }
"""


def shell_env(env: dict) -> dict:
    """env as a shell outside this interpreter's launcher has it: `pyenv exec`, which started this
    benchmark if python3 is a pyenv shim, put the interpreter's folder first on PATH and exported
    PYENV_VERSION and PYENV_DIR (which would make pyenv ignore a project's .python-version)."""
    env = dict(env)
    here = str(Path(sys.executable).parent)
    parts = env.get("PATH", "").split(os.pathsep)
    while parts and parts[0] == here:
        parts.pop(0)
    env["PATH"] = os.pathsep.join(parts)
    for name in ("PYENV_VERSION", "PYENV_DIR"):
        env.pop(name, None)
    return env


def describe_python3(env: dict) -> str:
    found = shutil.which("python3", path=env.get("PATH"))
    if not found:
        return "no python3 on PATH"
    with open(found, "rb") as f:
        script = f.read(2) == b"#!"
    return f"{found} ({'a launcher script' if script else 'an interpreter binary: nothing to resolve'})"


def first_case_secs(binary: Path, project: Path, env: dict) -> tuple[float, float]:
    """(start to the op's first call, whole run) in seconds."""
    calls = project / "first_calls.txt"
    calls.unlink(missing_ok=True)
    start = time.monotonic()
    proc = subprocess.run([str(binary), "ci", "run", "--out", str(project / "out")], env=env, cwd=project,
                          capture_output=True, text=True, timeout=600)
    whole = time.monotonic() - start
    if proc.returncode != 0:
        raise SystemExit(f"bench: ci run of the launcher project exited {proc.returncode}: {proc.stderr[-2000:]}")
    return min(float(line) for line in calls.read_text().split()) - start, whole


def bench_launcher(binary: Path, work: Path, quick: bool) -> list[Row]:
    env = shell_env(python_env(work / "home"))
    env.pop("GPUEMU_PYTHON", None)  # python3 from PATH, as a user's run finds it
    runs = 3 if quick else 7
    rows = []
    for label, files, toml in (("warm callable", {"ops.py": OPS}, TOML),
                               ("cold scripts", {"cold_op.py": COLD_OP, "cold_ref.py": COLD_REF},
                                TOML.replace('"ops:scale"', '"cold_op.py"').replace('"ops:scale_ref"',
                                                                                    '"cold_ref.py"'))):
        project = work / label.replace(" ", "-")
        project.mkdir(parents=True)
        for name, text in files.items():
            (project / name).write_text(text)
        (project / "gpuemu.toml").write_text(toml)
        log(f"launcher: {label}, ci run start to first case, python3 = {describe_python3(env)}, "
            f"{runs} runs each in turn")
        first_case_secs(binary, project, env)  # warm-up: page cache, the store
        resolved, shimmed = [], []
        for _ in range(runs):
            resolved.append(first_case_secs(binary, project, env))
            shimmed.append(first_case_secs(binary, project, {**env, "GPUEMU_RESOLVE_PYTHON": "0"}))
        first = statistics.median(r[0] for r in resolved)
        first_shim = statistics.median(r[0] for r in shimmed)
        whole = statistics.median(r[1] for r in resolved)
        whole_shim = statistics.median(r[1] for r in shimmed)
        rows.append(Row(f"(k) ci run start to first case, one op ({label}), python3 on PATH",
                        f"{1000 * first:.0f} ms", f"{1000 * first_shim:.0f} ms (GPUEMU_RESOLVE_PYTHON=0)",
                        first / first_shim, "", None,
                        note=f"python3 = {describe_python3(env)}; medians of {runs} runs each in turn; whole run "
                             f"(3 cases) {whole:.2f} s against {whole_shim:.2f} s ({whole / whole_shim:.2f}x)"))
    return rows
