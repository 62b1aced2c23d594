"""End-to-end (issue #18): an op that hands gpuemu a value it cannot take (a torch tensor on the
wrong device, of a dtype gpuemu cannot store, with requires_grad, a JAX tracer, a non-tensor).

Each is a clear op_error per case whose message names the op, the output, the dtype or device, and
what to do; the run loses nothing: every case of every op runs, the correct ops beside them pass,
and every failure is stored. Real torch and JAX through the real binary; never skipped.
"""
from __future__ import annotations

import importlib.util
import json
import sys
import textwrap

import pytest

OPS = textwrap.dedent('''
    import jax
    import torch

    def torch_good(inputs):
        return inputs["x"] * 1

    def wrong_device(inputs):
        x = inputs["x"]
        return torch.empty(x.shape, dtype=x.dtype, device="meta")

    def wrong_dtype(inputs):
        return torch.zeros(inputs["x"].shape, dtype=torch.complex64)

    def requires_grad(inputs):
        return inputs["x"].clone().requires_grad_(True)

    def not_a_tensor(inputs):
        return 1.0

    _seen = []

    def jax_tracer(inputs):
        @jax.jit
        def f(x):
            _seen.append(x)  # leaks the tracer out of jit
            return x
        f(inputs["x"])
        return _seen[-1]

    def jax_good(inputs):
        return inputs["x"] + 0
    ''')

REFS = 'import numpy as np\n\ndef identity(inputs):\n    return np.asarray(inputs["x"], dtype=np.float64)\n'

# op name -> (framework, the message's parts: what is wrong and what to do)
BAD = {
    "wrong_device": ("pytorch", ["op 'wrong_device': output 'out' is on device 'meta', but the op runs on 'cpu'",
                                 "return the output on 'cpu'"]),
    "wrong_dtype": ("pytorch", ["op 'wrong_dtype': output 'out' has dtype torch.complex64, which gpuemu cannot store "
                                "without a cast", "return one of torch.float16, torch.bfloat16"]),
    "requires_grad": ("pytorch", ["op 'requires_grad': output 'out' requires grad", "return out.detach()"]),
    "not_a_tensor": ("pytorch", ["op 'not_a_tensor': output 'out' is a float, not a tensor", "return a tensor"]),
    "jax_tracer": ("jax", ["op 'jax_tracer': output 'out' is a JAX tracer",
                           "return the result of calling the jitted function instead"]),
}
GOOD = {"torch_good": "pytorch", "jax_good": "jax"}
CASES = 3


def op_table(name: str, framework: str) -> str:
    return (f'[[ops]]\nname = "{name}"\nmodule = "ops_bad:{name}"\nreference = "refs_bad:identity"\n'
            f'framework = "{framework}"\n\n[ops.schema]\ndims = {{ M = [1, 4], N = [1, 16] }}\n'
            'inputs = { x = ["M", "N"] }\n')


def test_each_bad_output_is_a_clear_op_error_and_nothing_is_lost(project):
    missing = [m for m in ("torch", "jax") if importlib.util.find_spec(m) is None]
    if missing:  # test dependencies: a failure, never a skip
        pytest.fail(f"{', '.join(missing)} not installed for {sys.executable}: run scripts/install-deps.sh")
    project.write("")
    (project.root / "ops_bad.py").write_text(OPS)
    (project.root / "refs_bad.py").write_text(REFS)
    # The correct ops come after the bad ones: a bad op must not stop the run.
    tables = [op_table(name, fw) for name, (fw, _) in BAD.items()] + [op_table(n, fw) for n, fw in GOOD.items()]
    (project.root / "gpuemu.toml").write_text(
        f'[project]\nname = "bad-outputs"\n\n[validation]\ndtypes = ["float32"]\nseed = 5\n'
        f'test_cases = {CASES}\n\n' + "\n".join(tables))
    proc = project.run("--format", "json", "test", "--jobs", "2", timeout=600)
    assert proc.returncode == 1, proc.stderr[-3000:]
    ops = {op["op"]: op for op in json.loads(proc.stdout)["ops"]}
    assert sorted(ops) == sorted([*BAD, *GOOD])
    for name in GOOD:
        assert ops[name]["passed"] == ops[name]["total"] == CASES, ops[name]["failures"][:1]
    for name, (framework, parts) in BAD.items():
        op = ops[name]
        assert op["total"] == CASES and op["errors"] == CASES and op["passed"] == 0, op
        assert op["runtime"]["framework"] == framework, op["runtime"]
        for failure in op["failures"]:
            assert failure["kind"] == "op_error", failure
            assert "AdapterError: " in failure["message"], failure["message"]
            for part in parts:
                assert part in failure["message"], (name, failure["message"])
    # Every case of every bad op is stored, with its replay.
    stored = project.run("failures", "--format", "json", check_json=True).json["failures"]
    per_op = {name: sum(1 for f in stored if f["op"] == name) for name in BAD}
    assert per_op == {name: CASES for name in BAD}, per_op
