"""End-to-end with the real Triton and Pallas (issue #18): triton_interpret "always" and "auto" run a
@triton.jit kernel under the interpreter on a CPU and say so; "never" without a GPU stops the run
(exit 3) saying what to set, never a pass; a Pallas kernel gets interpret=True from interpret() or from a kwarg.

Never skipped: torch, triton and jax are test dependencies (scripts/install-deps.sh).
"""
from __future__ import annotations

import importlib.util
import json
import re
import sys
import textwrap
from pathlib import Path

import pytest

TRITON_OPS = textwrap.dedent('''
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)

    def scale(inputs):
        x = inputs["x"].contiguous()
        y = torch.empty_like(x)
        scale_kernel[(triton.cdiv(x.numel(), 32),)](x, y, x.numel(), BLOCK=32)
        return y
    ''')

PALLAS_OPS = textwrap.dedent('''
    import jax
    from jax.experimental import pallas as pl

    from gpuemu.frameworks.jax import interpret as pallas_interpret

    def _double(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2

    def _call(x, interpret):
        return pl.pallas_call(_double, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), interpret=interpret)(x)

    def from_interpret(inputs):
        return _call(inputs["x"], pallas_interpret())

    def from_kwarg(inputs, interpret):
        return _call(inputs["x"], interpret)
    ''')

REFS = textwrap.dedent('''
    import numpy as np

    def double(inputs, **kwargs):
        return 2.0 * np.asarray(inputs["x"], dtype=np.float64)
    ''')


def op_table(name: str, module: str, framework: str, extra: str = "") -> str:
    return (f'[[ops]]\nname = "{name}"\nmodule = "{module}"\nreference = "refs_double:double"\n'
            f'framework = "{framework}"\n{extra}\n[ops.schema]\ndims = {{ M = [1, 3], N = [1, 40] }}\n'
            'inputs = { x = ["M", "N"] }\n')


def has_gpu_node() -> bool:
    dev = Path("/dev")
    return (dev / "kfd").exists() or any(re.fullmatch(r"nvidia[0-9]+", p.name) for p in dev.iterdir())


def test_triton_and_pallas_interpreters_with_the_real_frameworks(project):
    missing = [m for m in ("torch", "triton", "jax") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.fail(f"{', '.join(missing)} not installed for {sys.executable}: run scripts/install-deps.sh")
    if has_gpu_node():
        pytest.fail("this test checks a CPU-only machine; on a GPU machine triton_interpret 'never' runs on it")
    project.write("")
    (project.root / "triton_ops.py").write_text(TRITON_OPS)
    (project.root / "pallas_ops.py").write_text(PALLAS_OPS)
    (project.root / "refs_double.py").write_text(REFS)
    (project.root / "gpuemu.toml").write_text(
        '[project]\nname = "real-interpreters"\n\n[validation]\ndtypes = ["float32", "float16"]\nseed = 11\n'
        'test_cases = 2\ntimeout = 300\n\n' + "\n".join([
            op_table("triton_always", "triton_ops:scale", "pytorch", 'triton_interpret = "always"'),
            op_table("triton_auto", "triton_ops:scale", "pytorch", 'triton_interpret = "auto"'),
            op_table("pallas_interpret", "pallas_ops:from_interpret", "jax", 'pallas_interpret = "always"'),
            op_table("pallas_kwarg", "pallas_ops:from_kwarg", "jax",
                     'pallas_interpret = "never"\nkwargs = { interpret = true }'),
        ]))
    proc = project.run("--format", "json", "test", "--jobs", "2", timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ops = {op["op"]: op for op in json.loads(proc.stdout)["ops"]}
    for name in ("triton_always", "triton_auto", "pallas_interpret", "pallas_kwarg"):
        assert ops[name]["passed"] == ops[name]["total"] > 0, (name, ops[name]["failures"][:1])
    for name in ("triton_always", "triton_auto"):
        assert ops[name]["runtime"]["triton"] == "interpreter", ops[name]["runtime"]
    assert ops["pallas_interpret"]["runtime"]["pallas"] == "interpreter", ops["pallas_interpret"]["runtime"]
    # The text summary says which ran: never mistaken for a GPU run.
    text = project.run("test", "--jobs", "2", timeout=900).stdout
    assert text.count("Triton: interpreter (not a GPU run)") == 2, text
    assert "Pallas: interpreter (not a GPU run)" in text, text


def test_triton_never_without_a_gpu_stops_the_run_saying_what_to_set(project):
    # No case of such an op can run here: an environment error (exit 3) naming the op and the fix,
    # like a framework that is not installed; never a pass, never a page of identical red cases.
    if has_gpu_node():
        pytest.fail("this test checks a CPU-only machine; on a GPU machine triton_interpret 'never' runs on it")
    project.write("")
    (project.root / "triton_ops.py").write_text(TRITON_OPS)
    (project.root / "refs_double.py").write_text(REFS)
    (project.root / "gpuemu.toml").write_text(
        '[project]\nname = "triton-never"\n\n[validation]\ndtypes = ["float32"]\nseed = 11\ntest_cases = 3\n'
        'timeout = 300\n\n' + op_table("triton_never", "triton_ops:scale", "pytorch", 'triton_interpret = "never"'))
    for args in (("test",), ("ci", "run", "--iterations", "2", "--out", "out")):
        proc = project.run(*args, timeout=900)
        assert proc.returncode == 3, (args, proc.returncode, proc.stdout[-2000:], proc.stderr[-3000:])
        assert "cannot run on this machine" in proc.stderr, proc.stderr[-3000:]
        assert "TritonNeedsGpuError: a Triton kernel was launched for the GPU" in proc.stderr, proc.stderr[-3000:]
        assert 'set triton_interpret = "always"' in proc.stderr, proc.stderr[-3000:]
        assert "PASS" not in proc.stdout, proc.stdout
