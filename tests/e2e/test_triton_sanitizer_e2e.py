"""End-to-end: the Triton sanitizer through the real gpuemu binary, real workers, torch and Triton's
interpreter, on the sanitizer's kernels of examples/triton: `gpuemu ci run` fails the unmasked tail
load and store as out_of_bounds (naming the kernel line, argument, program and offsets) and the row
max without other= on its numbers (its report naming that load and the fix), passes the correct
twin, and each printed replay fails the very same way (the case seed reaches the worker: same
program order, same poison). With `sanitize = false` the same bugs pass: the off switch works, and
the bare interpreter cannot see them.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from e2e_support import REPO

EXAMPLE = REPO / "examples" / "triton"
OPS = ["scale", "scale_tail_load_bug", "scale_tail_store_bug", "rowmax", "rowmax_other_bug"]

pytestmark = pytest.mark.xdist_group("triton-sanitizer")


def require():
    missing = [m for m in ("torch", "triton") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.fail(f"{', '.join(missing)} not installed for {sys.executable}: run scripts/install-deps.sh")


def project(tmp_path: Path, ops: list[str], sanitize: bool) -> Path:
    """A copy of examples/triton with only `ops`, float32, and `sanitize` as given."""
    folder = tmp_path / "triton"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__", ".gpuemu"))
    text = (EXAMPLE / "gpuemu.toml").read_text()
    head, *tables = text.split("\n[[ops]]\n")
    kept = [t for t in tables if t.split('"')[1] in ops]
    head = head.replace('dtypes = ["float32", "float16", "bfloat16"]',
                        f'dtypes = ["float32"]\nsanitize = {str(sanitize).lower()}')
    (folder / "gpuemu.toml").write_text(head + "".join("\n[[ops]]\n" + t for t in kept))
    return folder


def environment(home: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(REPO / "python"), env.get("PYTHONPATH", "")] if p)
    env.setdefault("GPUEMU_PYTHON", sys.executable)
    env["GPUEMU_HOME"] = str(home)
    env["HOME"] = str(home)
    for name in ("TRITON_INTERPRET", "GPUEMU_SANITIZE"):
        env.pop(name, None)  # the config decides, not the shell
    return env


def ci_run(gpuemu_bin, folder: Path, env: dict) -> tuple[int, dict, str]:
    out = folder / "out"
    proc = subprocess.run([str(gpuemu_bin), "ci", "run", "--seed", "11", "--out", str(out)], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=1200)
    assert (out / "result.json").exists(), f"no result.json (exit {proc.returncode}):\n{proc.stderr[-4000:]}"
    return proc.returncode, json.loads((out / "result.json").read_text()), proc.stdout + proc.stderr


def test_ci_run_catches_what_only_the_sanitizer_sees_and_replays_it(gpuemu_bin, tmp_path):
    require()
    folder = project(tmp_path, OPS, sanitize=True)
    env = environment(tmp_path / "home")
    code, result, output = ci_run(gpuemu_bin, folder, env)
    assert code == 1, output[-3000:]
    ops = {op["op"]: op for op in result["ops"]}
    for name in ("scale", "rowmax"):
        assert ops[name]["passed"] == ops[name]["total"] > 0, ops[name]["failures"][:1]
    for name, what, line, arg in [("scale_tail_load_bug", "load", 17, "x_ptr"),
                                  ("scale_tail_store_bug", "store", 19, "y_ptr")]:
        op = ops[name]
        assert op["failed"] > 0 and op["errors"] == 0, op["failures"][:1]
        for f in op["failures"]:
            assert f["kind"] == "out_of_bounds", f
            assert f"out-of-bounds {what} in Triton kernel 'scale_kernel' at " in f["message"]
            assert f"kernels/{name}.py:{line}: program " in f["message"] and f"argument '{arg}'" in f["message"]
    assert "refused" in ops["scale_tail_store_bug"]["failures"][0]["message"]
    rowmax_bug = ops["rowmax_other_bug"]
    assert rowmax_bug["failed"] > 0 and rowmax_bug["errors"] == 0
    assert {f["kind"] for f in rowmax_bug["failures"]} == {"mismatch"}, rowmax_bug["failures"][:1]
    # Each failure's report says why: the load that left the dead lanes to the poison, and the fix; the text
    # report shows that line too. scale (loads without other=, stores through the mask) and rowmax (other=)
    # pass, and a passing case's report has no stderr: no note.
    dead_lanes = ("gpuemu sanitizer: note: this case loaded masked-off lanes of tl.load without other= at "
                  "kernels/rowmax_other_bug.py:15 (rowmax_kernel);")
    for f in rowmax_bug["failures"]:
        assert dead_lanes in f["stderr"] and "Pass other= to tl.load, or mask the lanes" in f["stderr"], f
    assert "stderr: " + dead_lanes in output, output[-3000:]
    assert not any("without other=" in f.get("stderr", "") for op in ops.values() for f in op["failures"]
                   if op["op"] != "rowmax_other_bug"), "only the case that loaded poisoned lanes"

    # Each kind of failure, replayed from its printed command, fails the very same way.
    for name in ("scale_tail_load_bug", "scale_tail_store_bug", "rowmax_other_bug"):
        failure = ops[name]["failures"][0]
        argv = shlex.split(failure["replay"])
        proc = subprocess.run([str(gpuemu_bin), *argv[1:], "--format", "json"], cwd=folder, env=env,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 1, proc.stderr[-3000:]
        again = json.loads(proc.stdout)
        assert (again["seed"], again["kind"], again["message"]) == \
            (failure["seed"], failure["kind"], failure["message"])
        assert again["max_abs"] == failure["max_abs"], "the same program order and poison"


def test_sanitize_false_runs_the_bare_interpreter(gpuemu_bin, tmp_path):
    # The unmasked store is left out: on the bare interpreter it writes over the worker's heap.
    require()
    folder = project(tmp_path, ["scale_tail_load_bug", "rowmax_other_bug"], sanitize=False)
    code, result, output = ci_run(gpuemu_bin, folder, environment(tmp_path / "home"))
    for op in result["ops"]:
        assert op["passed"] == op["total"] > 0, (op["op"], op["failures"][:1])
    assert code == 0, output[-3000:]
