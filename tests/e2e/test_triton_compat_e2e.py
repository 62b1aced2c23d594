"""End-to-end: gpuemu's Triton compatibility layer through the real gpuemu binary, real workers, torch and
Triton on this CPU (issue 30): torch.cuda calls around a launch fail as interpreter_unsupported by default
and answer as one CPU device with interpreter_cuda_shim = true; what the interpreter cannot run
(inline assembly) is interpreter_unsupported with the kernel's line; a float kernel argument works in
warm workers and cold scripts; an op that imports Triton inside its call is labelled an interpreter run.

Never skipped: torch and triton are test dependencies (scripts/install-deps.sh).
"""
from __future__ import annotations

import importlib.util
import json
import sys
import textwrap

import pytest

KERNEL = '''
import torch
import triton
import triton.language as tl


@triton.jit
def add_eps(x_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    eps = eps.to(tl.float32)
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + eps, mask=mask)


@triton.jit
def asm_copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(y_ptr + offsets, y, mask=mask)


def launch(kernel, x, *extra):
    x = x.contiguous()
    y = torch.empty_like(x)
    kernel[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), *extra, BLOCK=64)
    return y


def with_device(inputs):
    """As kernel libraries write it: the launch inside the input's CUDA device."""
    with torch.cuda.device(torch.cuda.current_device()):
        return launch(add_eps, inputs["x"], 0.5)


def inline_asm(inputs):
    return launch(asm_copy, inputs["x"])
'''

LAZY = '''
def add_half(inputs):
    import triton_kernels  # Triton is first imported here, inside the call

    return triton_kernels.launch(triton_kernels.add_eps, inputs["x"], 0.5)
'''

COLD = '''
import triton_kernels
from gpuemu.script import serve


def run(inputs):
    return triton_kernels.launch(triton_kernels.add_eps, inputs["x"], 0.5)


serve(run)
'''

REFS = '''
import numpy as np


def add_half(inputs, **kwargs):
    return np.asarray(inputs["x"], dtype=np.float64) + 0.5


def identity(inputs, **kwargs):
    return np.asarray(inputs["x"], dtype=np.float64)
'''


def op_table(name: str, target: str, reference: str = "refs:add_half", extra: str = "") -> str:
    key = "op_script" if target.endswith(".py") else "module"
    return (f'[[ops]]\nname = "{name}"\n{key} = "{target}"\nreference = "{reference}"\n{extra}\n'
            '[ops.schema]\ndims = { N = [1, 150] }\ninputs = { x = ["N"] }\n')


def test_triton_compat_through_the_binary(project):
    missing = [m for m in ("torch", "triton") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.fail(f"{', '.join(missing)} not installed for {sys.executable}: run scripts/install-deps.sh")
    project.write("")
    (project.root / "triton_kernels.py").write_text(textwrap.dedent(KERNEL))
    (project.root / "lazy_ops.py").write_text(textwrap.dedent(LAZY))
    (project.root / "cold_op.py").write_text(textwrap.dedent(COLD))
    (project.root / "refs.py").write_text(textwrap.dedent(REFS))
    (project.root / "gpuemu.toml").write_text(
        '[project]\nname = "triton-compat"\nframework = "pytorch"\n\n[validation]\ndtypes = ["float32"]\n'
        'seed = 5\ntest_cases = 2\ntimeout = 300\ntriton_interpret = "always"\n\n' + "\n".join([
            op_table("gpu_calls", "triton_kernels:with_device"),
            op_table("gpu_calls_shim", "triton_kernels:with_device", extra="interpreter_cuda_shim = true"),
            op_table("inline_asm", "triton_kernels:inline_asm", reference="refs:identity"),
            op_table("lazy_import", "lazy_ops:add_half"),
            op_table("cold_float_argument", "cold_op.py"),
        ]))
    proc = project.run("--format", "json", "test", "--jobs", "2", timeout=900)
    assert proc.returncode == 1, proc.stderr[-3000:]
    ops = {op["op"]: op for op in json.loads(proc.stdout)["ops"]}

    refused = ops["gpu_calls"]
    assert refused["passed"] == 0 and refused["failures"], refused
    for failure in refused["failures"]:
        assert failure["kind"] == "interpreter_unsupported", failure
        assert "torch.cuda.current_device() at triton_kernels.py:" in failure["message"], failure["message"]
        assert "interpreter_cuda_shim = true" in failure["message"], failure["message"]

    asm = ops["inline_asm"]
    assert asm["passed"] == 0 and asm["failures"], asm
    for failure in asm["failures"]:
        assert failure["kind"] == "interpreter_unsupported", failure
        assert "tl.inline_asm_elementwise at triton_kernels.py:" in failure["message"], failure["message"]
        assert "not a bug of the kernel" in failure["message"]

    for name in ("gpu_calls_shim", "lazy_import", "cold_float_argument"):
        assert ops[name]["passed"] == ops[name]["total"] > 0, (name, ops[name]["failures"][:1])
    assert ops["lazy_import"]["runtime"].get("triton") == "interpreter", ops["lazy_import"]["runtime"]
