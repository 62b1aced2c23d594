"""End-to-end: [project] numpy_bfloat16 reaches every numpy callable through the real CLI. Absent
(or "ml_dtypes"), a bfloat16 case arrives as an ml_dtypes.bfloat16 array; "float32" keeps the older
exact-float32 form. Checked in a warm callable, a persistent (warm) script and a cold script, each
asserting what it received, under `gpuemu ci run`, `gpuemu fuzz` and `gpuemu test`.
"""
from __future__ import annotations

import json
import textwrap

import pytest

# Each op fails its case (op_error) unless it received the form the config asked for.
OPS = textwrap.dedent('''
    import gpuemu

    def check(inputs, expected):
        x = inputs["x"]
        assert gpuemu.case_dtype() == "bfloat16", gpuemu.case_dtype()
        assert x.dtype.name == expected, f"got {x.dtype}, expected {expected}"
        if expected == "bfloat16":
            import ml_dtypes
            assert x.dtype == ml_dtypes.bfloat16
        return x.copy()
    ''')

SCRIPT = textwrap.dedent('''
    from gpuemu.script import serve
    from ops_bf16 import check, EXPECTED

    serve(lambda inputs: check(inputs, EXPECTED))
    ''')

REF = textwrap.dedent('''
    import numpy as np

    def identity(inputs):
        return np.asarray(inputs["x"], dtype=np.float64)  # exact from either form
    ''')

OP_TABLE = ('[[ops]]\nname = "{name}"\n{runner}\nreference = "refs_bf16:identity"\n'
            '[ops.schema]\ndims = {{ M = [1, 4], N = [1, 33] }}\ninputs = {{ x = ["M", "N"] }}\n')


def write(project, form_line: str, expected: str):
    project.write("")
    (project.root / "ops_bf16.py").write_text(OPS + f"\nEXPECTED = {expected!r}\n\n"
                                              "def warm(inputs):\n    return check(inputs, EXPECTED)\n")
    (project.root / "refs_bf16.py").write_text(REF)
    (project.root / "script_bf16.py").write_text(SCRIPT)
    ops = [OP_TABLE.format(name="warm_callable", runner='module = "ops_bf16:warm"'),
           OP_TABLE.format(name="warm_script", runner='op_script = "script_bf16.py"\npersistent = true'),
           OP_TABLE.format(name="cold_script", runner='op_script = "script_bf16.py"')]
    (project.root / "gpuemu.toml").write_text(
        f'[project]\nname = "bf16"\n{form_line}\n\n[validation]\ndtypes = ["bfloat16"]\nseed = 7\n'
        'test_cases = 2\n\n[ci]\nfuzz_iterations = 2\n\n' + "\n".join(ops))


def assert_all_passed(proc, ops_doc):
    ops = {op["op"]: op for op in ops_doc}
    assert set(ops) == {"warm_callable", "warm_script", "cold_script"}, proc.stdout + proc.stderr
    for name, op in ops.items():
        assert op["failed"] == 0 and op["passed"] == op["total"] > 0, (name, op.get("failures", [])[:1])


@pytest.mark.parametrize("form_line, expected", [
    ("", "bfloat16"),  # no key: the default, real bfloat16
    ('numpy_bfloat16 = "float32"', "float32"),  # the documented switch for existing configs
])
def test_ci_run_and_fuzz_hand_numpy_callables_the_configured_bfloat16_form(project, form_line, expected):
    write(project, form_line, expected)
    proc = project.run("ci", "run", "--iterations", "2", "--out", "out")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert_all_passed(proc, json.loads((project.root / "out" / "result.json").read_text())["ops"])
    proc = project.run("fuzz", "--iterations", "2", "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert_all_passed(proc, json.loads(proc.stdout)["ops"])


def test_an_op_written_for_the_other_form_errors_on_every_case(project):
    """The other direction: an op written for float32 under the default form fails, naming the dtype."""
    write(project, 'numpy_bfloat16 = "ml_dtypes"', "float32")
    proc = project.run("test", "--cases", "1", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    for op in json.loads(proc.stdout)["ops"]:
        assert op["errors"] == op["total"] > 0 and op["passed"] == 0, op
        assert "got bfloat16, expected float32" in json.dumps(op["failures"][0]), op["failures"][0]
