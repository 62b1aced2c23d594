"""End-to-end (issue 30, item 3): an op that writes into an input fails as input_mutated, naming the
input and the first changed index, in every mode gpuemu runs an op: warm workers with inputs mapped
from gpuemu's file (the default, the next case started ahead), one call at a time
(GPUEMU_PARALLEL_REFERENCE=0) and with the bytes in the payload (GPUEMU_MAPPED_INPUTS=0), cold
op scripts, and through a running daemon (--daemon); numpy and torch. The correct twin of each passes
in each mode, and a reference that writes into its own copy is harmless. Real binary, real workers.
"""
from __future__ import annotations

import json
import re

import pytest

OPS = '''
import numpy as np

def numpy_mutate(inputs):
    x = inputs["x"]
    x *= 2
    return x.copy()

def numpy_good(inputs):
    return inputs["x"] * 2

def torch_mutate(inputs):
    x = inputs["x"]
    x.mul_(2)
    return x.clone()

def torch_good(inputs):
    return inputs["x"] * 2
'''

REFS = '''
import numpy as np

def double(inputs):
    x = inputs["x"]
    x *= 2  # the reference's own private copy: harmless, never checked
    return np.asarray(x, dtype=np.float64)
'''

COLD = '''
from gpuemu.script import serve
from ops_mut import {name}
serve({name})
'''

# op name -> (op_script, framework, mutates)
OPS_TABLE = {
    "numpy_mutate": ("ops_mut:numpy_mutate", "numpy", True),
    "numpy_good": ("ops_mut:numpy_good", "numpy", False),
    "torch_mutate": ("ops_mut:torch_mutate", "pytorch", True),
    "torch_good": ("ops_mut:torch_good", "pytorch", False),
    "numpy_mutate_cold": ("cold_numpy_mutate.py", "numpy", True),
    "numpy_good_cold": ("cold_numpy_good.py", "numpy", False),
    "torch_mutate_cold": ("cold_torch_mutate.py", "pytorch", True),
    "torch_good_cold": ("cold_torch_good.py", "pytorch", False),
}
CASES = 2
INDEX = re.compile(r"wrote into its input 'x': \d+ elements? changed, the first at x\[\d+, \d+\]")


def write_project(project) -> None:
    project.write("")
    (project.root / "ops_mut.py").write_text(OPS)
    (project.root / "refs_mut.py").write_text(REFS)
    for fn in ("numpy_mutate", "numpy_good", "torch_mutate", "torch_good"):
        (project.root / f"cold_{fn}.py").write_text(COLD.format(name=fn))
    tables = [f'[[ops]]\nname = "{name}"\nop_script = "{script}"\nreference = "refs_mut:double"\n'
              f'framework = "{framework}"\nlayouts = ["contiguous", "strided"]\n\n'
              '[ops.schema]\ndims = { M = [2, 8], N = [3, 40] }\ninputs = { x = ["M", "N"] }\n'
              for name, (script, framework, _) in OPS_TABLE.items()]
    (project.root / "gpuemu.toml").write_text(
        '[project]\nname = "input-writes"\n\n[validation]\ndtypes = ["float32", "bfloat16"]\nseed = 7\n'
        f'test_cases = {CASES}\n\n' + "\n".join(tables))


def check_verdicts(doc: dict) -> None:
    ops = {op["op"]: op for op in doc["ops"]}
    assert sorted(ops) == sorted(OPS_TABLE)
    for name, (_, _, mutates) in OPS_TABLE.items():
        op = ops[name]
        if not mutates:
            assert op["passed"] == op["total"] == 2 * CASES, (name, op["failures"][:1])
            continue
        assert op["passed"] == 0 and op["total"] == 2 * CASES, (name, op)
        for failure in op["failures"]:
            assert failure["kind"] == "input_mutated", (name, failure)
            assert INDEX.search(failure["message"]), (name, failure["message"])
            # A warm worker knows the op's name; a cold request does not carry it (docs/script-protocol.md).
            who = "the op" if name.endswith("_cold") else f"op '{name}'"
            assert f"InputMutatedError: {who} wrote into its input 'x'" in failure["message"], failure["message"]


# Mapped inputs with the next case started ahead (the default), inputs in the payload, and one call
# at a time (GPUEMU_PARALLEL_REFERENCE=0: nothing starts ahead).
@pytest.mark.parametrize("mapped,parallel", [("1", "1"), ("0", "1"), ("1", "0")],
                         ids=["mapped_inputs", "payload_inputs", "one_call_at_a_time"])
def test_input_writes_fail_in_warm_and_cold_modes(project, mapped, parallel):
    write_project(project)
    proc = project.run("--format", "json", "test", env={"GPUEMU_MAPPED_INPUTS": mapped,
                                                        "GPUEMU_PARALLEL_REFERENCE": parallel}, timeout=900)
    assert proc.returncode == 1, proc.stderr[-3000:]
    check_verdicts(json.loads(proc.stdout))
    # Stored with the inputs gpuemu made (not what the op left behind): the replay fails the same way.
    stored = project.run("failures", "--op", "numpy_mutate", "--format", "json", check_json=True).json["failures"]
    again = project.run("--format", "json", "reproduce", str(stored[0]["seed"]), "--op", "numpy_mutate")
    assert again.returncode == 1 and "input_mutated" in again.stdout, again.stdout[-2000:]


def test_input_writes_fail_through_the_daemon(project):
    write_project(project)
    start = project.run("daemon", "start", "--background", timeout=60)
    assert start.returncode == 0, start.stderr
    try:
        proc = project.run("--daemon", "--format", "json", "test", timeout=900)
        assert proc.returncode == 1, proc.stderr[-3000:]
        check_verdicts(json.loads(proc.stdout))
    finally:
        project.run("daemon", "stop", timeout=60)
