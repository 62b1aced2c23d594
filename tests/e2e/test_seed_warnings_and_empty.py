# Two promises of the seed documents, run through the real binary: [policies] warn_threshold warns
# in test, fuzz, ci run and validate (configuration.txt), and size-0 dims (faq.txt) pass everywhere.
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import pytest

from e2e_support import REPO


def near_tolerance_toml(share, threshold=None):
    policies = f"\n[policies]\nwarn_threshold = {threshold}\n" if threshold is not None else ""
    return f"""
[project]
name = "warn"

[validation]
dtypes = ["float32"]
seed = 3
test_cases = 2
{policies}
[[ops]]
name = "near"
op_script = "op_near_tolerance.py"
reference = "ref_identity.py"

[ops.kwargs]
share = {share}

[ops.tolerances]
float32 = {{ atol = 1e-5, rtol = 1e-5 }}
"""


def warn_project(project, share, threshold=None):
    return project.write(near_tolerance_toml(share, threshold), ["op_near_tolerance.py", "ref_identity.py"])


# Item 10: configuration.txt's warn_threshold = 0.8 and an op that uses 90% of its tolerance.
def test_warn_threshold_warns_in_test_fuzz_and_ci(project):
    warn_project(project, 0.9, 0.8)
    text = project.run("test")
    assert text.returncode == 0, text.stderr
    [line] = [line for line in text.stdout.splitlines() if line.startswith("warning: ")]
    assert "near [float32] passed but used 9" in line and "warn_threshold 80%" in line
    assert "gpuemu reproduce" in line

    fuzz = project.run("fuzz", "-n", "3", "--format", "json")
    assert fuzz.returncode == 0, fuzz.stderr
    [warning] = json.loads(fuzz.stdout)["warnings"]
    assert warning.startswith("near [float32] passed but used 9")
    assert "gpuemu fuzz: warning: near [float32] passed" in fuzz.stderr  # not in the document: on stderr

    ci = project.run("ci", "run", "-n", "2", "--out", "out", env={"GITHUB_ACTIONS": "true",
                                                                  "GITHUB_WORKSPACE": str(project.root)})
    assert ci.returncode == 0, ci.stderr
    result = json.loads((project.root / "out" / "result.json").read_text())
    assert result["passed"] is True and len(result["warnings"]) == 1
    assert "### Warnings" in (project.root / "out" / "summary.md").read_text()
    assert "warning: near [float32] passed" in (project.root / "out" / "summary.txt").read_text()
    assert any(line.startswith("::warning title=gpuemu warning::near [float32] passed")
               for line in ci.stdout.splitlines()), ci.stdout


def test_warn_threshold_is_silent_below_it_and_a_failure_stays_a_failure(project):
    warn_project(project, 0.9, 0.95)
    quiet = project.run("test", "--format", "json")
    assert quiet.returncode == 0 and "warnings" not in json.loads(quiet.stdout)
    warn_project(project, 1.5, 0.8)
    failing = project.run("test", "--format", "json")
    assert failing.returncode == 1
    doc = json.loads(failing.stdout)
    assert doc["ops"][0]["failed"] == 2 and "warnings" not in doc


VALIDATE = '''
import numpy as np
from gpuemu import Client

client = Client()
x = np.linspace(-1, 1, 64, dtype=np.float32).reshape(4, 16)
share = float(__import__("sys").argv[1])
out = (x.astype(np.float64) + share * (1e-5 + 1e-5 * np.abs(x))).astype(np.float32)
result = client.validate_op("near", {"x": x}, out)
print(result.passed, "|" + "|".join(result.warnings))
'''


def test_warn_threshold_in_the_daemons_validate_reply(project):
    warn_project(project, 0.9, 0.8)
    home = pathlib.Path(tempfile.mkdtemp(prefix="gsw", dir="/tmp")) / "h"
    env = {"GPUEMU_HOME": str(home)}
    try:
        assert project.run("daemon", "start", "--background", env=env, timeout=120).returncode == 0
        run_env = dict(os.environ, GPUEMU_HOME=str(home), HOME=str(project.root),
                       PYTHONPATH=os.pathsep.join(filter(None, [str(REPO / "python"), os.environ.get("PYTHONPATH")])))
        for share, expect in (("0.9", "True |near [float32] passed but used 9"), ("0.5", "True |\n")):
            proc = subprocess.run([sys.executable, "-c", VALIDATE, share], cwd=project.root, env=run_env,
                                  capture_output=True, text=True, timeout=300)
            assert proc.returncode == 0 and proc.stdout.startswith(expect), proc.stdout + proc.stderr
    finally:
        project.run("daemon", "stop", env=env, timeout=120)
        shutil.rmtree(home.parent, ignore_errors=True)


# Item 12: faq.txt's size-0 dims. M = [0, 1] draws 0 about half the time (a boundary size).
def empty_toml(op_lines, framework=""):
    return f"""
[project]
name = "empty"

[validation]
dtypes = ["float32"]
seed = 11
test_cases = 6

[[ops]]
name = "relu"
{op_lines}
reference = "ref_relu.py"
layouts = ["contiguous", "transposed", "strided"]
{framework}

[ops.schema]
dims = {{ M = [0, 1], N = [1, 3] }}
inputs = {{ x = ["M", "N"] }}
"""


def test_a_wrong_shape_fails_on_the_empty_cases_only(project):
    project.write(empty_toml('op_script = "op_relu_empty_shape.py"'), ["op_relu_empty_shape.py", "ref_relu.py"])
    proc = project.run("fuzz", "-n", "12", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    [op] = json.loads(proc.stdout)["ops"]
    assert op["failed"] > 0 and op["passed"] > 0 and op["errors"] == 0
    for f in op["failures"]:
        assert f["kind"] == "shape_mismatch" and f["dims"]["M"] == 0 and f["shapes"]["x"][0] == 0, f


# The correct op in each runner: a cold script, a warm module:function in every framework adapter,
# and the same run through the daemon. Every case passes, the empty ones included.
RUNNERS = {
    "script": ('op_script = "op_relu.py"', ""),
    "numpy": ('op_script = "relu_ops:numpy_relu"', 'framework = "numpy"'),
    "pytorch": ('op_script = "relu_ops:torch_relu"', 'framework = "pytorch"'),
    "jax": ('op_script = "relu_ops:jax_relu"', 'framework = "jax"'),
    "tensorflow": ('op_script = "relu_ops:tensorflow_relu"', 'framework = "tensorflow"'),
}


VALIDATE_EMPTY = '''
import numpy as np
from gpuemu import Client

client = Client()
x = np.zeros((0, 3), np.float32)
for out in (np.zeros((0, 3), np.float32), np.zeros((1, 3), np.float32)):
    result = client.validate_op("relu", {"x": x}, out)
    print(result.passed, result.kind)
'''


def empty_cases(project):
    """The seeds of the cases of `fuzz -n 12` that are empty, found with the wrong-shape twin (the case
    plan depends on the op's name, dims, dtypes and layouts, not on which op runs)."""
    toml = project.root / "gpuemu.toml"
    written = toml.read_text()
    toml.write_text(empty_toml('op_script = "op_relu_empty_shape.py"'))
    proc = project.run("fuzz", "-n", "12", "--format", "json", "--no-store")
    toml.write_text(written)
    seeds = [f["seed"] for f in json.loads(proc.stdout)["ops"][0]["failures"] if f["dims"]["M"] == 0]
    assert seeds, "no empty case drawn: the test would check nothing"
    return seeds


@pytest.mark.parametrize("runner", list(RUNNERS))
def test_empty_tensors_pass_through_every_runner(project, runner):
    op_line, framework = RUNNERS[runner]
    project.write(empty_toml(op_line, framework), ["op_relu.py", "ref_relu.py", "relu_ops.py",
                                                   "op_relu_empty_shape.py"])
    assert empty_cases(project)
    proc = project.run("fuzz", "-n", "12", "--format", "json")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    [op] = json.loads(proc.stdout)["ops"]
    assert op["total"] == op["passed"] == 12
    if runner in ("script", "pytorch"):
        home = pathlib.Path(tempfile.mkdtemp(prefix="gse", dir="/tmp")) / "h"
        env = {"GPUEMU_HOME": str(home)}
        try:
            assert project.run("daemon", "start", "--background", env=env, timeout=120).returncode == 0
            through = project.run("--daemon", "fuzz", "-n", "12", "--format", "json", env=env)
            assert through.returncode == 0, through.stderr
            assert json.loads(through.stdout)["ops"][0]["passed"] == 12
            # A client's empty tensors through the daemon's validate: equal empty shapes pass, a
            # wrong shape fails.
            run_env = dict(os.environ, GPUEMU_HOME=str(home), HOME=str(project.root),
                           PYTHONPATH=os.pathsep.join(filter(None, [str(REPO / "python"),
                                                                    os.environ.get("PYTHONPATH")])))
            proc = subprocess.run([sys.executable, "-c", VALIDATE_EMPTY], cwd=project.root, env=run_env,
                                  capture_output=True, text=True, timeout=300)
            assert proc.returncode == 0 and proc.stdout == "True none\nFalse shape_mismatch\n", proc.stdout + proc.stderr
        finally:
            project.run("daemon", "stop", env=env, timeout=120)
            shutil.rmtree(home.parent, ignore_errors=True)
