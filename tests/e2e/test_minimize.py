"""End-to-end: `gpuemu minimize` through the real binary on the failures a new user meets first:
the bundled matmul_acc_bug, and a one-input op (a blocked cumsum that drops its block carry) whose
values phase used to read freed memory once a smaller case was accepted (issue 19)."""
import json

from e2e_support import REPO, one_op_toml

CUMSUM_OP = """
[project]
name = "e2e-minimize"

[validation]
dtypes = ["float32"]
seed = 7
timeout = 30

[[ops]]
name = "cumsum_no_carry"
persistent = true
op_script = "op_cumsum_no_carry.py"
reference = "ref_cumsum.py"

[ops.schema]
dims = { M = [1, 16], N = [1, 825] }
inputs = { x = ["M", "N"] }
"""


def fuzz_failures(project, *args):
    proc = project.run("fuzz", "--format", "json", *args)
    assert proc.returncode == 1, proc.stderr
    return [f for op in json.loads(proc.stdout)["ops"] for f in op["failures"]]


def minimize(project, seed, *args):
    proc = project.run("minimize", seed, "--format", "json", *args)
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}"
    return json.loads(proc.stdout)


def assert_no_larger(before, after):
    assert before.keys() == after.keys()
    for name in before:
        assert len(before[name]) == len(after[name]) and all(a <= b for a, b in zip(after[name], before[name])), (
            name, before[name], after[name])


def test_one_input_op_minimizes_through_dims_and_values(project):
    project.write(CUMSUM_OP, ["op_cumsum_no_carry.py", "ref_cumsum.py"])
    failures = fuzz_failures(project, "--iterations", "20", "--fail-fast")
    big = max(failures, key=lambda f: f["shapes"]["x"][1])
    assert big["shapes"]["x"][1] > 32  # the carry only matters past the first block
    doc = minimize(project, big["seed"], "--max-iters", "200")
    assert doc["kind"] == "mismatch" and doc["steps"] >= 1
    assert_no_larger(doc["original"]["shapes"], doc["minimized"]["shapes"])
    again = project.run("reproduce", doc["minimized"]["seed"], "--format", "json")
    assert again.returncode == 1, again.stderr
    replay = json.loads(again.stdout)
    assert replay["kind"] == "mismatch" and replay["shapes"]["x"] == doc["minimized"]["shapes"]["x"]


def test_matmul_acc_bug_seeds_minimize_with_every_strategy(project):
    import shutil
    shutil.copytree(REPO / "examples", project.root / "ex", ignore=shutil.ignore_patterns("__pycache__"))
    project.root = project.root / "ex"
    failures = fuzz_failures(project, "--op", "matmul_acc_bug", "-n", "30", "--seed", "42")
    assert failures
    for failure, strategy in zip(failures, ["all", "values", "dims", "all"]):
        doc = minimize(project, failure["seed"], "--strategy", strategy, "--max-iters", "60")
        assert doc["kind"] == failure["kind"]
        assert_no_larger(doc["original"]["shapes"], doc["minimized"]["shapes"])
        assert project.run("reproduce", doc["minimized"]["seed"]).returncode == 1
