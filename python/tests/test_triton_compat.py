# gpuemu's Triton compatibility layer against the real Triton interpreter and torch on CPU (no mocks):
# float arguments, pointer-like arguments, empty tensors, bfloat16 arithmetic, what still cannot run.
"""python/gpuemu/frameworks/_triton_compat.py, in this process (tests/triton_interpreted.py). The
layer's torch.cuda part and its install in workers are tested through the gpuemu binary
(tests/e2e/test_triton_compat.py); libdevice in test_triton_libdevice.py."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch

from gpuemu.errors import InterpreterUnsupportedError, OutOfBoundsError
from triton_interpreted import interpreting

with interpreting():  # triton is imported here, under the interpreter
    import triton
    import triton.language as tl
    from triton.language.extra import libdevice

    from gpuemu.frameworks import _triton_compat as triton_compat

    @triton.jit
    def add_eps(x_ptr, y_ptr, eps, N: tl.constexpr):  # the 6-line kernel of issue 30
        offsets = tl.arange(0, N)
        eps = eps.to(tl.float32)
        x = tl.load(x_ptr + offsets)
        tl.store(y_ptr + offsets, x + eps)

    @triton.jit
    def copy(x_ptr, y_ptr, n, N: tl.constexpr):
        offsets = tl.arange(0, N)
        tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n), mask=offsets < n)

    @triton.jit
    def elementwise(a_ptr, b_ptr, c_ptr, y_ptr, N: tl.constexpr, OP: tl.constexpr):
        offsets = tl.arange(0, N)
        a = tl.load(a_ptr + offsets)
        b = tl.load(b_ptr + offsets)
        c = tl.load(c_ptr + offsets)
        if OP == "add":
            y = a + b
        elif OP == "sub":
            y = a - b
        elif OP == "mul":
            y = a * b
        elif OP == "div":
            y = a / b
        elif OP == "fma":
            y = tl.fma(a, b, c)
        elif OP == "exp":
            y = tl.exp(a.to(tl.float32)).to(a.dtype)
        elif OP == "neg_max":
            y = tl.maximum(-a, b)
        elif OP == "where_lt":
            y = tl.where(a < b, a, c)
        else:
            y = (a * 3.0).to(tl.float16).to(a.dtype)  # casts: bf16 <-> fp32 <-> fp16
        tl.store(y_ptr + offsets, y)

    @triton.jit
    def reduce_rows(x_ptr, sum_ptr, max_ptr, min_ptr, cumsum_ptr, N: tl.constexpr):
        row = tl.program_id(0)
        offsets = tl.arange(0, N)
        x = tl.load(x_ptr + row * N + offsets)
        tl.store(sum_ptr + row, tl.sum(x, axis=0))
        tl.store(max_ptr + row, tl.max(x, axis=0))
        tl.store(min_ptr + row, tl.min(x, axis=0))
        tl.store(cumsum_ptr + row * N + offsets, tl.cumsum(x, axis=0))

    @triton.jit
    def dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
        rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b).to(c_ptr.dtype.element_ty))

    @triton.jit
    def scatter_add(x_ptr, y_ptr, N: tl.constexpr, BINS: tl.constexpr):
        offsets = tl.arange(0, N)
        tl.atomic_add(y_ptr + offsets % BINS, tl.load(x_ptr + offsets))

    @triton.jit
    def half_tanh(x_ptr, y_ptr, N: tl.constexpr):
        offsets = tl.arange(0, N)
        tl.store(y_ptr + offsets, libdevice.tanh(tl.load(x_ptr + offsets)))

    @triton.jit
    def inline_asm(x_ptr, y_ptr, N: tl.constexpr):
        offsets = tl.arange(0, N)
        x = tl.load(x_ptr + offsets)
        y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)
        tl.store(y_ptr + offsets, y)


class StridedBuffer:
    """What a kernel library passes instead of a torch tensor: data_ptr() and dtype, nothing else."""

    def __init__(self, tensor: torch.Tensor):
        self.tensor, self.dtype = tensor, tensor.dtype

    def data_ptr(self) -> int:
        return self.tensor.data_ptr()


def ulps(got: torch.Tensor, want: torch.Tensor) -> int:
    """Largest distance in units in the last place between two bfloat16 tensors (0 for equal NaNs)."""
    def ordered(t):
        bits = t.contiguous().view(torch.int16).to(torch.int32)
        return torch.where(bits < 0, -(bits & 0x7FFF), bits)
    return int((ordered(got) - ordered(want)).abs().max())


def test_float_argument_becomes_an_fp32_scalar():
    x = torch.arange(8, dtype=torch.float32)
    y = torch.empty_like(x)
    add_eps[(1,)](x, y, 1e-5, N=8)
    assert torch.equal(y, x + torch.tensor(1e-5, dtype=torch.float32))
    add_eps[(1,)](x, y, np.float64(0.25), N=8)  # numpy.float64 is a float: fp32 too, as the compiler does
    assert torch.equal(y, x + 0.25)


def test_numpy_float32_argument_fails_as_the_gpu_launcher_does():
    x = torch.zeros(8)
    with pytest.raises(TypeError, match="numpy.float32 kernel argument.*pass float"):
        add_eps[(1,)](x, torch.empty_like(x), np.float32(0.5), N=8)


def test_object_with_data_ptr_and_dtype_is_a_pointer():
    x = torch.arange(8, dtype=torch.float32)
    y = torch.zeros(8)
    copy[(1,)](StridedBuffer(x), StridedBuffer(y), 6, N=8)
    assert torch.equal(y, torch.cat([x[:6], torch.zeros(2)]))


def test_empty_tensor_dereferenced_is_out_of_bounds_not_a_crash():
    empty = torch.empty(0)
    assert empty.data_ptr() == 0
    with pytest.raises(OutOfBoundsError, match=r"load at .*test_triton_compat.py:\d+ .*x_ptr.*data_ptr\(\) is 0"):
        copy[(1,)](empty, torch.zeros(8), 8, N=8)
    copy[(1,)](empty, torch.empty(0), 0, N=8)  # every lane masked off: fine, as on a GPU


def test_the_empty_tensor_crash_without_the_layer_is_real():
    """The bare interpreter dereferences address 0 (the worker dies): what the layer prevents."""
    code = ("import torch, triton, triton.language as tl\n"
            "@triton.jit\ndef k(x_ptr, y_ptr, N: tl.constexpr):\n"
            "    o = tl.arange(0, N)\n    tl.store(y_ptr + o, tl.load(x_ptr + o))\n"
            "k[(1,)](torch.empty(0), torch.zeros(8), N=8)\n")
    proc = subprocess.run([sys.executable, "-c", code], env={"TRITON_INTERPRET": "1", "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode < 0 or proc.returncode > 128, proc.stderr[-2000:]


BF16_OPS = {
    "add": lambda a, b, c: a + b,
    "sub": lambda a, b, c: a - b,
    "mul": lambda a, b, c: a * b,
    "div": lambda a, b, c: a / b,
    "fma": lambda a, b, c: (a.float() * b.float() + c.float()).bfloat16(),
    "exp": lambda a, b, c: torch.exp(a.float()).bfloat16(),
    "neg_max": lambda a, b, c: torch.maximum(-a, b),
    "where_lt": lambda a, b, c: torch.where(a < b, a, c),
    "cast": lambda a, b, c: (a.float() * 3.0).half().bfloat16(),
}


@pytest.mark.parametrize("op", sorted(BF16_OPS))
def test_bfloat16_elementwise_matches_torch(op):
    gen = torch.Generator().manual_seed(3)
    a, b, c = (torch.randn(64, generator=gen).mul(4).bfloat16() for _ in range(3))
    b = torch.where(b.abs() < 0.1, torch.ones_like(b), b)
    y = torch.empty_like(a)
    elementwise[(1,)](a, b, c, y, N=64, OP=op)
    assert ulps(y, BF16_OPS[op](a, b, c)) == 0


def test_bfloat16_raw_bit_arithmetic_is_gone():
    """issue 30's 8 values: the bare interpreter's product was off by up to 2e35."""
    a = torch.tensor([-1.5, 2.0, -3.25, 0.5, 7.0, -0.125, 100.0, -1e-3]).bfloat16()
    y = torch.empty_like(a)
    elementwise[(1,)](a, a, a, y, N=8, OP="mul")
    assert torch.equal(y, a * a)


def test_bfloat16_reductions_compute_in_fp32_and_round_once():
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(3, 32, generator=gen).mul(10).bfloat16()
    sums, maxes, mins = (torch.empty(3, dtype=torch.bfloat16) for _ in range(3))
    cumsum = torch.empty_like(x)
    reduce_rows[(3,)](x, sums, maxes, mins, cumsum, N=32)
    assert ulps(sums, x.float().sum(dim=1).bfloat16()) == 0
    assert torch.equal(maxes, x.max(dim=1).values) and torch.equal(mins, x.min(dim=1).values)
    assert ulps(cumsum, x.float().cumsum(dim=1).bfloat16()) == 0


def test_bfloat16_dot_accumulates_in_fp32():
    gen = torch.Generator().manual_seed(7)
    a = torch.randn(16, 32, generator=gen).bfloat16()
    b = torch.randn(32, 16, generator=gen).bfloat16()
    c = torch.empty(16, 16, dtype=torch.bfloat16)
    dot[(1,)](a, b, c, M=16, N=16, K=32)
    want = (a.double() @ b.double()).bfloat16()
    assert ulps(c, want) <= 1, "fp32 accumulation of exact bf16 products, one rounding to bf16"


def test_bfloat16_atomic_add_accumulates_lane_by_lane():
    x = torch.tensor([1.5, -2.0, 3.25, 0.5, 100.0, 0.0078125, -7.0, 2.0]).bfloat16()
    y = torch.zeros(2, dtype=torch.bfloat16)
    scatter_add[(2,)](x, y, N=8, BINS=2)  # two programs, each adds its eight lanes into two bins
    want = torch.zeros(2, dtype=torch.bfloat16)
    for _ in range(2):
        for i, v in enumerate(x):
            want[i % 2] = (want[i % 2].float() + v.float()).bfloat16()
    assert torch.equal(y, want)


def test_libdevice_with_a_type_its_table_lacks_fails_as_compiling_would():
    """libdevice takes fp32 and fp64: an fp16 call is the kernel's error on a GPU too (a compile error)."""
    x = torch.rand(8).half()
    with pytest.raises(triton.runtime.errors.InterpreterError, match=r"libdevice.tanh at .*no version for arguments"
                       r" of types .*fp16.*convert the arguments"):
        half_tanh[(1,)](x, torch.empty_like(x), N=8)


def test_inline_asm_is_an_interpreter_limit_with_the_kernel_line():
    x = torch.zeros(8)
    with pytest.raises(InterpreterUnsupportedError) as info:
        inline_asm[(1,)](x, torch.empty_like(x), N=8)
    message = str(info.value)
    assert "tl.inline_asm_elementwise" in message and "test_triton_compat.py:" in message
    assert "a limit of the interpreter, not a bug of the kernel" in message
    assert info.value.kind == "interpreter_unsupported"


def test_layer_is_a_no_op_without_the_interpreter():
    code = ("import os, sys\nsys.path.insert(0, sys.argv[1])\n"
            "from gpuemu.frameworks import _triton_compat as triton_compat\n"
            "from triton.runtime import interpreter\nbefore = interpreter._implicit_cvt\n"
            "assert triton_compat.install() is False\nassert interpreter._implicit_cvt is before\n"
            "assert not triton_compat.installed()\nprint('ok')\n")
    proc = subprocess.run([sys.executable, "-c", code, str(triton_compat.__file__).rsplit("/gpuemu/", 1)[0]],
                          env={"TRITON_INTERPRET": "0", "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
                          timeout=120)
    assert proc.stdout.strip() == "ok", proc.stderr[-2000:]


def test_hook_installs_on_import_and_never_imports_triton_itself():
    code = ("import sys\nsys.path.insert(0, sys.argv[1])\n"
            "from gpuemu.frameworks import triton_hook\ntriton_hook.arm()\n"
            "import numpy\nassert 'triton' not in sys.modules, 'arm() imported triton'\n"
            "import triton\nfrom gpuemu.frameworks import _triton_compat as triton_compat\nassert triton_compat.installed()\n"
            "from triton.language.extra import libdevice\nassert libdevice.rsqrt.__gpuemu_libdevice__\n"
            "print('ok')\n")
    proc = subprocess.run([sys.executable, "-c", code, str(triton_compat.__file__).rsplit("/gpuemu/", 1)[0]],
                          env={"TRITON_INTERPRET": "1", "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
                          timeout=120)
    assert proc.stdout.strip() == "ok", proc.stderr[-2000:]


def test_unknown_triton_version_is_warned_about_once():
    code = ("import sys\nsys.path.insert(0, sys.argv[1])\nimport triton\ntriton.__version__ = '9.1.0'\n"
            "from gpuemu.frameworks import _triton_compat as triton_compat\ntriton_compat.install()\ntriton_compat.install()\n")
    proc = subprocess.run([sys.executable, "-c", code, str(triton_compat.__file__).rsplit("/gpuemu/", 1)[0]],
                          env={"TRITON_INTERPRET": "1", "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stderr.count("knows Triton 3.9; this is Triton 9.1.0") == 1, proc.stderr


def test_libdevice_names_imported_before_the_layer_still_run():
    """`from ...libdevice import rsqrt` before gpuemu armed: the launch rebinds the kernel's names."""
    code = ("import sys\nsys.path.insert(0, sys.argv[1])\nimport torch, triton, triton.language as tl\n"
            "from triton.language.extra.libdevice import rsqrt\n"
            "from triton.language.extra.cuda.libdevice import tanh\n"
            "@triton.jit\ndef k(x_ptr, y_ptr, N: tl.constexpr):\n    o = tl.arange(0, N)\n"
            "    x = tl.load(x_ptr + o)\n    tl.store(y_ptr + o, rsqrt(x) + tanh(x))\n"
            "from gpuemu.frameworks import triton_hook\ntriton_hook.arm()\n"
            "x = torch.rand(8) + 0.5\ny = torch.empty(8)\nk[(1,)](x, y, N=8)\n"
            "print(float((y - (torch.rsqrt(x) + torch.tanh(x))).abs().max()))\n")
    proc = subprocess.run([sys.executable, "-c", code, str(triton_compat.__file__).rsplit("/gpuemu/", 1)[0]],
                          env={"TRITON_INTERPRET": "1", "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert float(proc.stdout) < 1e-6


def test_no_libdevice_wrapper_takes_the_place_of_a_replaced_function():
    """The stale-import rebinding knows the replaced functions by id: were one freed, a wrapper made after
    it (the CUDA module's, which a library binds after arming) could take its id, and a kernel's name
    bound to it would be swapped for another function (FlagGems' batch_norm then called rcp64h for rsqrt)."""
    originals = triton_compat._state["libdevice_originals"]
    modules = [sys.modules[name] for name in triton_compat.LIBDEVICE_MODULES if name in sys.modules]
    wrappers = [v for m in modules for v in vars(m).values() if getattr(v, "__gpuemu_libdevice__", False)]
    taken = [w.__name__ for w in wrappers if id(w) in originals and originals[id(w)][0] is not w]
    assert len(wrappers) > 100 and not taken
