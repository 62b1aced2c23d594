"""End-to-end (issue #18): which tensors each callable gets, through the real binary and frameworks.

`[project] framework` applies to every op without its own key; an op's `framework` wins; a
`reference_framework` reference gets that framework's tensors; every callable sees the case's dtype through
gpuemu.case_dtype(); an op may return anything with __dlpack__. A callable that gets the wrong kind
of tensor fails its case (op_error), so a wrong choice can never pass.
"""
from __future__ import annotations

import importlib.util
import json
import sys
import textwrap

import pytest

OPS = textwrap.dedent('''
    import numpy as np
    import jax
    import torch

    import gpuemu

    class OnlyDLPack:
        """A tensor known to gpuemu only through the DLPack protocol."""
        def __init__(self, t):
            self._t = t
        def __dlpack__(self, **kwargs):
            return self._t.__dlpack__(**kwargs)
        def __dlpack_device__(self):
            return self._t.__dlpack_device__()

    def _check(x, kind):
        assert isinstance(x, kind), f"got {type(x)}, expected {kind}"
        assert gpuemu.case_dtype() == str(x.dtype).replace("torch.", ""), (gpuemu.case_dtype(), x.dtype)

    def project_default(inputs):          # [project] framework = "pytorch"
        _check(inputs["x"], torch.Tensor)
        return inputs["x"] * 2

    def numpy_op(inputs):                 # framework = "numpy"
        _check(inputs["x"], np.ndarray)
        return inputs["x"] * 2

    def jax_op(inputs):                   # framework = "jax"
        _check(inputs["x"], jax.Array)
        return inputs["x"] * 2

    def dlpack_op(inputs):
        _check(inputs["x"], torch.Tensor)
        return OnlyDLPack((inputs["x"] * 2).contiguous())
    ''')

REFS = textwrap.dedent('''
    import numpy as np
    import torch

    import gpuemu

    def numpy_ref(inputs):
        assert gpuemu.case_dtype() is not None
        return 2.0 * np.asarray(inputs["x"], dtype=np.float64)

    def torch_ref(inputs):                # reference_framework = "pytorch": float64 torch tensors
        x = inputs["x"]
        assert isinstance(x, torch.Tensor), type(x)
        assert x.dtype == torch.float64, x.dtype
        assert gpuemu.case_dtype() in ("float32", "float16", "bfloat16"), gpuemu.case_dtype()
        return 2.0 * x
    ''')

OPS_TABLE = {
    "project_default": ("", "refs_sel:numpy_ref"),
    "numpy_op": ('framework = "numpy"', "refs_sel:numpy_ref"),
    "jax_op": ('framework = "jax"', "refs_sel:numpy_ref"),
    "dlpack_op": ('reference_framework = "pytorch"', "refs_sel:torch_ref"),
    # The wrong choice must fail: a numpy op given torch tensors by [project] framework.
    "wrong_framework": ("", "refs_sel:numpy_ref"),
}


def test_project_and_op_framework_case_dtype_and_dlpack(project):
    missing = [m for m in ("torch", "jax") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.fail(f"{', '.join(missing)} not installed for {sys.executable}: run scripts/install-deps.sh")
    project.write("")
    (project.root / "ops_sel.py").write_text(OPS)
    (project.root / "refs_sel.py").write_text(REFS)
    tables = []
    for name, (extra, ref) in OPS_TABLE.items():
        module = "numpy_op" if name == "wrong_framework" else name
        tables.append(f'[[ops]]\nname = "{name}"\nmodule = "ops_sel:{module}"\nreference = "{ref}"\n{extra}\n'
                      '[ops.schema]\ndims = { M = [1, 4], N = [1, 16] }\ninputs = { x = ["M", "N"] }\n')
    (project.root / "gpuemu.toml").write_text(
        '[project]\nname = "selection"\nframework = "pytorch"\nnumpy_bfloat16 = "ml_dtypes"\n\n[validation]\n'
        'dtypes = ["float32", "float16", "bfloat16"]\nseed = 4\ntest_cases = 2\n\n' + "\n".join(tables))
    proc = project.run("--format", "json", "test", "--jobs", "2", timeout=600)
    assert proc.returncode == 1, proc.stderr[-3000:]
    ops = {op["op"]: op for op in json.loads(proc.stdout)["ops"]}
    expected = {"project_default": "pytorch", "numpy_op": "numpy", "jax_op": "jax", "dlpack_op": "pytorch",
                "wrong_framework": "pytorch"}
    for name, framework in expected.items():
        assert ops[name]["runtime"]["framework"] == framework, (name, ops[name]["runtime"])
    for name in ("project_default", "numpy_op", "jax_op", "dlpack_op"):
        assert ops[name]["passed"] == ops[name]["total"] == 6, (name, ops[name]["failures"][:1])
    wrong = ops["wrong_framework"]
    assert wrong["passed"] == 0 and wrong["errors"] == wrong["total"] == 6, wrong
    assert all(f["kind"] == "op_error" and "expected <class 'numpy.ndarray'>" in f["message"]
               for f in wrong["failures"]), wrong["failures"][:1]
