"""Corner cases (docs/configuration.md "Corner cases"): a kernel wrong only when the reduced dim is 1
is caught by `test` and by `fuzz -n 16` under every one of 20 master seeds, while a correct one passes
them all; a corner case replays and minimizes from its seed; a short run names the corners it drops."""
import json

import pytest

TOML = """
[project]
name = "corners"

[validation]
dtypes = ["float32"]
python_path = ["."]
timeout = 20

[[ops]]
name = "rowvar"
reference = "rowvar_ops:reference"
implementations = [{{ name = "nan_at_one", op_script = "rowvar_ops:nan_at_one" }},
                   {{ name = "right", op_script = "rowvar_ops:right" }}]

[ops.schema]
dims = {{ R = [1, 64], N = [1, 512] }}
inputs = {{ x = ["R", "N"] }}
output = ["R"]
"""

OPS = """import numpy as np

def reference(inputs):
    return np.asarray(inputs["x"], dtype=np.float64).var(axis=-1)

def right(inputs):
    x = inputs["x"]
    return x.astype(np.float64).var(axis=-1).astype(x.dtype)

def nan_at_one(inputs):
    # The unbiased variance scaled back to the biased one: equal for every n but 1, where 0/0 is NaN.
    x = inputs["x"]
    n = x.shape[-1]
    with np.errstate(invalid="ignore", divide="ignore"):
        v = x.astype(np.float64).var(axis=-1, ddof=1) * (n - 1) / n
    return v.astype(x.dtype)
"""

SEEDS = range(1, 21)


@pytest.fixture
def rowvar(project):
    project.write(TOML.format())
    (project.root / "rowvar_ops.py").write_text(OPS)
    return project


def ops_of(proc):
    doc = json.loads(proc.stdout)
    return {op["op"]: op for op in doc["ops"]}, doc


@pytest.mark.parametrize("command", [["test"], ["fuzz", "--iterations", "16"]], ids=["test", "fuzz16"])
def test_a_kernel_wrong_only_at_size_1_fails_under_every_seed(rowvar, command):
    caught = 0
    for seed in SEEDS:
        proc = rowvar.run("--no-store", "--format", "json", *command, "--seed", str(seed))
        assert proc.returncode == 1, proc.stderr
        ops, _ = ops_of(proc)
        wrong, right = ops["rowvar/nan_at_one"], ops["rowvar/right"]
        assert right["status"] == "passed" and right["total"] == wrong["total"], right["failures"][:1]
        # The corners ran first, at both implementations, with the same seeds (one op, one family).
        names = [c["name"] for c in wrong["corners"]]
        assert names == ["every dim at its minimum: R=1, N=1", "R alone at its minimum: R=1, N=33",
                         "N alone at its minimum: R=33, N=1"]
        assert [c["case"] for c in wrong["corners"]] == [0, 1, 2]
        assert wrong["corners"] == right["corners"]
        failing = [f for f in wrong["failures"] if f["dims"]["N"] == 1]
        assert failing and all(f["kind"] in ("nonfinite_mismatch", "unexpected_nonfinite") for f in failing)
        assert {f["corner"] for f in failing if "corner" in f} == {names[0], names[2]}
        assert all(f["dims"]["N"] == 1 for f in wrong["failures"])  # wrong nowhere else
        caught += 1
    assert caught == len(SEEDS)


def test_a_corner_case_replays_and_minimizes_from_its_seed(rowvar):
    proc = rowvar.run("--format", "json", "fuzz", "-n", "3", "--seed", "7", "--op", "rowvar/nan_at_one")
    ops, _ = ops_of(proc)
    failure = next(f for f in ops["rowvar/nan_at_one"]["failures"] if f["corner"].startswith("N alone"))
    assert failure["dims"] == {"R": 33, "N": 1}
    # Regenerated from the seed alone (the store is bypassed): the same corner shape and values.
    again = rowvar.run("--no-store", "--format", "json", "reproduce", failure["seed"], "--op", "rowvar/nan_at_one")
    assert again.returncode == 1, again.stderr
    replayed = json.loads(again.stdout)
    assert replayed["from_snapshot"] is False and replayed["kind"] == failure["kind"]
    assert replayed["dims"] == failure["dims"] and replayed["corner"] == failure["corner"]
    assert replayed["worst"] == failure["worst"]
    small = rowvar.run("--format", "json", "minimize", failure["seed"], "--op", "rowvar/nan_at_one")
    assert small.returncode == 0, small.stderr
    minimized = json.loads(small.stdout)["minimized"]
    assert minimized["dims"] == {"R": 1, "N": 1}


def test_fewer_cases_than_corners_names_the_corners_it_drops(rowvar):
    proc = rowvar.run("--no-store", "--format", "json", "test", "--cases", "1", "--seed", "5", "--op", "rowvar/right")
    assert proc.returncode == 0, proc.stderr
    ops, doc = ops_of(proc)
    op = ops["rowvar/right"]
    assert op["total"] == 1 and [c["case"] for c in op["corners"]] == [0]
    assert op["corners_dropped"] == ["float32: R alone at its minimum: R=1, N=33",
                                     "float32: N alone at its minimum: R=33, N=1"]
    warning = next(w for w in doc["warnings"] if "corner cases" in w)
    assert "op 'rowvar/right'" in warning and "left out 2" in warning and "N alone at its minimum" in warning
    assert "left out 2" in proc.stderr
