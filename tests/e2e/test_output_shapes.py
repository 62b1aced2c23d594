"""Output shapes are checked against what the config declares, not only against the reference: an op
and a reference that both return the wrong shape (a flattened or broadcast tensor of the right size)
must fail, through `[ops.schema] output` and through `shape_preserved` (docs/configuration.md)."""
import json

import pytest

FLAT = ("import _proto\nx, _, _ = _proto.read()\n_proto.write(x['x'].astype('{dtype}').reshape(-1))\n")

TOML = """
[project]
name = "shapes"

[validation]
dtypes = ["float32"]
seed = 3
timeout = 10
test_cases = 2

[[ops]]
name = "op"
op_script = "{op}"
reference = "{ref}"
{extra}

[ops.schema]
dims = {{ M = [2, 6], N = [2, 9] }}
inputs = {{ x = ["M", "N"] }}
{output}
"""


def project_with(project, op, ref, extra="", output=""):
    (project.root / "op_flat.py").write_text(FLAT.format(dtype="float32"))
    (project.root / "ref_flat.py").write_text(FLAT.format(dtype="float64"))
    return project.write(TOML.format(op=op, ref=ref, extra=extra, output=output), ["op_identity.py", "ref_identity.py"])


def failures(project):
    proc = project.run("--format", "json", "test")
    doc = json.loads(proc.stdout)
    return proc, doc["ops"][0]


@pytest.mark.parametrize("extra, output, source", [
    ("", 'output = ["M", "N"]', "[ops.schema] output"),
    ('invariants = ["shape_preserved"]', "", "the first input 'x' (shape_preserved)"),
])
def test_a_wrong_shape_cannot_pass_by_matching_an_equally_wrong_reference(project, extra, output, source):
    project_with(project, "op_flat.py", "ref_flat.py", extra, output)
    proc, op = failures(project)
    assert proc.returncode == 1, proc.stderr
    assert op["total"] == op["errors"] > 0
    first = op["failures"][0]
    assert first["kind"] == "reference_error"
    assert "reference output 'out' has shape [" in first["message"] and source in first["message"]


def test_declared_output_shape_fails_the_op_against_a_correct_reference(project):
    project_with(project, "op_flat.py", "ref_identity.py", output='output = ["M", "N"]')
    proc, op = failures(project)
    assert proc.returncode == 1
    assert {f["kind"] for f in op["failures"]} == {"shape_mismatch"}


@pytest.mark.parametrize("extra, output", [("", 'output = ["M", "N"]'), ('invariants = ["shape_preserved"]', "")])
def test_right_shapes_pass(project, extra, output):
    project_with(project, "op_identity.py", "ref_identity.py", extra, output)
    proc, op = failures(project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert op["passed"] == op["total"] > 0
