"""Kernel launches under the Triton interpreter (docs/frameworks.md, "Launches"): result.json counts each
op's @triton.jit launches per kernel; an op whose wrapper falls back to torch on a CPU (not x.is_cuda)
fails as kernel_not_launched naming the kernel it should have launched, unless it opts out with
require_launch = false (then it passes with a note); a CUDA-style kernel[grid, block] launch, or a grid
function returning floats, is the op's op_error naming its line and what Triton expects, with and without
the sanitizer, never an exception out of gpuemu's own code."""
import importlib.util
import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.xdist_group("triton-launches")

TOML = """
[project]
name = "launches"
framework = "pytorch"

[validation]
dtypes = ["float32"]
triton_interpret = "always"
test_cases = 2
timeout = 300
python_path = ["."]

[[ops]]
name = "launched"
module = "launch_ops:launched"
reference = "launch_ops:reference"

[[ops]]
name = "falls_back"
module = "launch_ops:falls_back"
reference = "launch_ops:reference"

[[ops]]
name = "falls_back_opted_out"
module = "launch_ops:falls_back"
reference = "launch_ops:reference"
require_launch = false

[[ops]]
name = "cuda_style"
module = "launch_ops:cuda_style"
reference = "launch_ops:reference"

[[ops]]
name = "cuda_style_bare"
module = "launch_ops:cuda_style"
reference = "launch_ops:reference"
sanitize = false

[[ops]]
name = "grid_of_floats"
module = "launch_ops:grid_of_floats"
reference = "launch_ops:reference"
"""

OPS = '''import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def add_one_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)


def launched(inputs):
    x = inputs["x"]
    out = torch.empty_like(x)
    add_one_kernel[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


def falls_back(inputs):
    x = inputs["x"]
    if not x.is_cuda:  # the kernel only on a GPU: on a CPU this is all plain torch
        return x + 1
    return launched(inputs)


def cuda_style(inputs):
    x = inputs["x"]
    out = torch.empty_like(x)
    add_one_kernel[(triton.cdiv(x.numel(), 64),), (64,)](x, out, x.numel(), BLOCK=64)  # CUDA_STYLE_LINE
    return out


def grid_of_floats(inputs):
    x = inputs["x"]
    out = torch.empty_like(x)
    add_one_kernel[lambda meta: (x.numel() / meta["BLOCK"],)](x, out, x.numel(), BLOCK=64)  # FLOAT_LINE
    return out


def reference(inputs):
    return np.asarray(inputs["x"], dtype=np.float64) + 1
'''


def line_of(marker: str) -> int:
    return next(i for i, line in enumerate(OPS.splitlines(), 1) if marker in line)


@pytest.fixture(scope="module")
def result(tmp_path_factory, gpuemu_bin):
    """The ops of one `gpuemu test` run (each op: 2 cases of the default [4, 64] shape)."""
    missing = [m for m in ("torch", "triton") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.fail(f"{', '.join(missing)} not installed for {sys.executable}: run scripts/install-deps.sh")
    root = tmp_path_factory.mktemp("launches")
    (root / "gpuemu.toml").write_text(TOML)
    (root / "launch_ops.py").write_text(OPS)
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "GPUEMU_SANITIZE")}
    env.update(GPUEMU_HOME=str(root / "home"), HOME=str(root))
    proc = subprocess.run([str(gpuemu_bin), "--no-store", "--format", "json", "test", "--seed", "3"], cwd=root,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    return {op["op"]: op for op in doc["ops"]} | {"warnings": doc.get("warnings", [])}


def test_an_op_that_launches_its_kernel_passes_and_reports_the_launches(result):
    op = result["launched"]
    assert op["status"] == "passed" and op["runtime"]["triton"] == "interpreter"
    assert op["launches"] == {"calls": 2, "without_launch": 0, "kernels": {"add_one_kernel": 2}}


def test_a_wrapper_that_falls_back_to_torch_fails_as_kernel_not_launched(result):
    op = result["falls_back"]
    assert op["status"] == "failed" and op["failed"] == 2
    assert op["launches"] == {"calls": 2, "without_launch": 2, "kernels": {}}
    assert {f["kind"] for f in op["failures"]} == {"kernel_not_launched"}
    assert op["failures"][0]["message"] == (
        "KernelNotLaunchedError: the call returned without launching the kernel 'add_one_kernel': its output came "
        "from other code (a torch fallback when not x.is_cuda?), not the kernel; launch it on CPU tensors under the "
        "interpreter, or set require_launch = false on the op")


def test_an_op_that_opts_out_passes_with_a_note(result):
    op = result["falls_back_opted_out"]
    assert op["status"] == "passed" and op["passed"] == 2
    assert op["launches"] == {"calls": 2, "without_launch": 2, "kernels": {}}
    assert ("op 'falls_back_opted_out' launched no @triton.jit kernel in 2 of 2 calls (require_launch = false): "
            "those cases checked the code it ran instead, not a kernel") in result["warnings"]


@pytest.mark.parametrize("name", ["cuda_style", "cuda_style_bare"])
def test_a_cuda_style_launch_is_the_ops_error_naming_its_line(result, name):
    ops = result
    op = ops[name]
    assert op["errors"] == 2 and {f["kind"] for f in op["failures"]} == {"op_error"}
    failure = op["failures"][0]
    assert failure["message"] == (
        f"MalformedLaunchError: kernel 'add_one_kernel' launched at launch_ops.py:{line_of('CUDA_STYLE_LINE')} with "
        "grid ((4,), (64,)): kernel[grid, block] is CUDA's launch: Triton's block size is a tl.constexpr argument; "
        "Triton expects kernel[grid](...) with 1 to 3 non-negative integers, or a grid function returning them")
    # The kernel's error, not gpuemu's: no traceback through the sanitizer or the interpreter's loop.
    assert "_triton_sanitizer.py" not in failure["stderr"] and "can't multiply sequence" not in failure["stderr"]


def test_a_grid_function_returning_floats_is_the_ops_error(result):
    failure = result["grid_of_floats"]["failures"][0]
    assert failure["kind"] == "op_error"
    assert (f"launched at launch_ops.py:{line_of('FLOAT_LINE')} with grid (4.0,) from its grid function: entry 0 is "
            "4.0, a float, not an integer; Triton expects kernel[grid](...)") in failure["message"], failure["message"]
