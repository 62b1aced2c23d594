# The bridges that let Triton libraries written for the compiler (FlagGems) run unmodified under gpuemu's
# interpreter layer, each on a minimal kernel: the gap in the bare interpreter (a subprocess), the fix here.
"""python/gpuemu/frameworks/_triton_library.py, _triton_boolop.py, _cuda_refusal.py, the duck-typed pointer
rule of _triton_compat.py, the sanitizer's bounds for duck-typed tensors and the pinning of Autotuner
subclasses (triton_autotune.py), against the real interpreter and torch on CPU (issue 40)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

from gpuemu.errors import InterpreterUnsupportedError, OutOfBoundsError
from triton_interpreted import interpreting

with interpreting():  # triton is imported here, under the interpreter
    import triton
    import triton.language as tl

    from gpuemu.frameworks import _cuda_refusal as cuda_refusal
    from gpuemu.frameworks import _triton_library as triton_library
    from gpuemu.frameworks import _triton_sanitizer as triton_sanitizer
    from gpuemu.frameworks import triton_autotune
    from gpuemu.frameworks.convert import CaseRun, _CASE_RUN

    triton_library.install()

    @triton.jit
    def copy(x_ptr, y_ptr, n, N: tl.constexpr):
        offsets = tl.arange(0, N)
        tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n), mask=offsets < n)

    @triton.jit
    def lowest(dtype):  # FlagGems' utils/limits.py get_dtype_min: reads the constexpr's .value
        dtype_ = dtype.value
        if dtype_.is_floating():
            value: tl.constexpr = float("-inf")
            return value
        value: tl.constexpr = 0
        return value

    @triton.jit
    def row_max(x_ptr, y_ptr, N: tl.constexpr):
        offsets = tl.arange(0, N)
        x = tl.load(x_ptr + offsets, mask=offsets < 3, other=lowest(x_ptr.dtype.element_ty))
        tl.store(y_ptr, tl.max(x, axis=0))

    @triton.jit
    def fill_rows(y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):  # FlagGems' log_softmax mask idiom
        rows = tl.arange(0, BM)[:, None]
        cols = tl.arange(0, BN)[None, :]
        mask = rows < M and cols < N
        tl.store(y_ptr + rows * BN + cols, 1.0, mask=mask)


    @triton.jit
    def keep_nonzero(x_ptr, y_ptr, n, N: tl.constexpr):  # FlagGems' nll_loss ignore mask idiom
        offsets = tl.arange(0, N)
        x = tl.load(x_ptr + offsets, mask=offsets < n, other=0.0)
        keep = not (x == 0.0) and offsets < n
        tl.store(y_ptr + offsets, keep.to(tl.float32), mask=offsets < n)

    @triton.jit
    def argmax_row(x_ptr, v_ptr, i_ptr, N: tl.constexpr):  # FlagGems' argmax_kernel_1, bfloat16
        value, index = tl.max(tl.load(x_ptr + tl.arange(0, N)), axis=0, return_indices=True)
        tl.store(v_ptr, value)
        tl.store(i_ptr, index)

    @triton.jit
    def copy_rows(x_ptr, y_ptr, B, W, BLOCK_W: tl.constexpr):  # FlagGems' reflection_pad1d mask idiom
        row = tl.program_id(0)
        offsets = tl.arange(0, BLOCK_W)
        mask = (offsets < W) & (row < B)
        tl.store(y_ptr + row * W + offsets, tl.load(x_ptr + row * W + offsets, mask=mask, other=0), mask=mask)

    @triton.jit
    def fill_grid(y_ptr, n):
        tl.store(y_ptr + tl.program_id(1), 1.0)


class StridedBuffer:
    """FlagGems' duck-typed tensor: data_ptr(), dtype, shape, stride(), untyped_storage(); no new_empty."""

    def __init__(self, base: torch.Tensor, offset: int = 0):
        self._base, self.dtype, self.offset = base, base.dtype, offset
        self.shape = (base.numel() - offset,)

    def data_ptr(self) -> int:
        return self._base.data_ptr() + self.offset * self.dtype.itemsize

    def stride(self) -> tuple:
        return (1,)

    def untyped_storage(self):
        return self._base.untyped_storage()


def bare(code: str, **env: str) -> subprocess.CompletedProcess:
    """`code` in a fresh Python under the bare interpreter (no gpuemu layer)."""
    full = textwrap.dedent("""
        import torch, triton, triton.language as tl
        from triton.runtime.jit import JITFunction
    """) + textwrap.dedent(code)
    environment = {"TRITON_INTERPRET": "1", "PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env}
    with open(os.devnull) as devnull:
        return subprocess.run([sys.executable, "-c", full], env=environment, capture_output=True, text=True,
                              timeout=300, stdin=devnull)


def test_duck_typed_tensor_with_a_storage_is_a_pointer():
    x, y = torch.arange(8, dtype=torch.float32), torch.zeros(8)
    copy[(1,)](StridedBuffer(x, offset=2), StridedBuffer(y), 5, N=8)
    assert torch.equal(y, torch.cat([x[2:7], torch.zeros(3)]))


def test_duck_typed_tensor_fails_the_bare_interpreters_host_copy():
    proc = bare("""
        class StridedBuffer:
            def __init__(self, t): self.t, self.dtype, self.shape = t, t.dtype, t.shape
            def data_ptr(self): return self.t.data_ptr()
            def stride(self): return self.t.stride()
            def untyped_storage(self): return self.t.untyped_storage()
        @triton.jit
        def k(x_ptr, N: tl.constexpr):
            tl.store(x_ptr + tl.arange(0, N), 1.0)
        k[(1,)](StridedBuffer(torch.zeros(8)), N=8)
    """)
    assert proc.returncode != 0 and "new_empty" in proc.stderr, proc.stderr[-2000:]


def test_sanitizer_bounds_a_duck_typed_tensor_by_its_storage():
    x = torch.arange(8, dtype=torch.float32)
    token = _CASE_RUN.set(CaseRun(1))
    triton_sanitizer.install()
    try:
        copy[(1,)](StridedBuffer(x, offset=2), torch.zeros(8), 6, N=8)  # lanes 0..5 of x[2:]: inside x
        wanted = r"argument 'x_ptr', offsets 6 .*storage offset 2\) spans offsets -2\.\.5"
        with pytest.raises(OutOfBoundsError, match=wanted):
            copy[(1,)](StridedBuffer(x, offset=2), torch.zeros(8), 7, N=8)  # lane 6 of x[2:] is x[8]: outside
    finally:
        triton_sanitizer.uninstall()
        _CASE_RUN.reset(token)


def test_jit_function_is_a_jit_function_to_libraries():
    assert isinstance(copy, triton.runtime.JITFunction)
    assert isinstance(copy, triton.runtime.interpreter.InterpretedFunction)
    assert copy.__module__ == __name__ and copy.__globals__ is globals()
    assert copy.src.startswith("def copy(x_ptr, y_ptr, n, N: tl.constexpr):")
    assert len(copy.cache_key) == 64 and copy.cache_key == copy.cache_key
    assert [(p.name, p.is_constexpr) for p in copy.params] == [("x_ptr", False), ("y_ptr", False), ("n", False),
                                                               ("N", True)]
    wrapper = triton.runtime.Heuristics(copy, copy.arg_names, {})
    fn = wrapper
    while not isinstance(fn, triton.runtime.JITFunction):  # FlagGems' LibEntry walk
        fn = fn.fn
    assert fn is copy


def test_bare_interpreters_jit_function_is_no_jit_function():
    proc = bare("""
        @triton.jit
        def k(x_ptr):
            pass
        print(isinstance(k, JITFunction), k.__module__, hasattr(k, "cache_key"), hasattr(k, "src"))
    """)
    assert proc.stdout.split() == ["False", "triton.runtime.interpreter", "False", "False"], proc.stderr[-2000:]


def test_launch_returns_a_kernel_that_relaunches_with_the_non_constexpr_arguments():
    x, y = torch.arange(8, dtype=torch.float32), torch.zeros(8)
    kernel = copy[(1,)](x, y, 3, N=8)
    assert torch.equal(y[:3], x[:3]) and not y[3:].any()
    z = torch.zeros(8)
    kernel[(1,)](x, z, 6)  # as LibEntry relaunches a cached CompiledKernel: N=8 is bound
    assert torch.equal(z[:6], x[:6]) and not z[6:].any()
    with pytest.raises(TypeError, match="takes 3 non-constexpr arguments"):
        kernel[(1,)](x, z, 6, 8)


def test_constexpr_dtype_has_value():
    x, y = torch.tensor([1.0, -5.0, 2.0, 9.0]), torch.zeros(1)
    row_max[(1,)](x, y, N=4)
    assert y.item() == 2.0  # the masked lane is -inf, not 9


def test_constexpr_dtype_has_no_value_in_the_bare_interpreter():
    proc = bare("""
        @triton.jit
        def f(dtype):
            return dtype.value.is_floating()
        @triton.jit
        def k(x_ptr):
            tl.store(x_ptr, f(x_ptr.dtype.element_ty))
        k[(1,)](torch.zeros(1))
    """)
    assert proc.returncode != 0 and "has no attribute 'value'" in proc.stderr, proc.stderr[-2000:]


def test_and_of_tensor_masks_is_their_logical_and():
    y = torch.zeros(4, 8)
    fill_rows[(1,)](y, 2, 5, BM=4, BN=8)
    want = torch.zeros(4, 8)
    want[:2, :5] = 1.0
    assert torch.equal(y, want)


def test_and_of_tensor_masks_loses_the_first_mask_in_the_bare_interpreter():
    proc = bare("""
        @triton.jit
        def k(y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
            rows = tl.arange(0, BM)[:, None]
            cols = tl.arange(0, BN)[None, :]
            mask = rows < M and cols < N
            tl.store(y_ptr + rows * BN + cols, 1.0, mask=mask)
        y = torch.zeros(4, 8)
        k[(1,)](y, 2, 5, BM=4, BN=8)
        print(int(y.sum()))
    """)
    assert proc.stdout.split() == ["20"], proc.stderr[-2000:]  # all 4 rows written, not 2


def test_not_of_a_tensor_is_its_elementwise_logical_not():
    x, y = torch.tensor([0.0, 2.0, 0.0, -1.0]), torch.full((4,), 7.0)
    keep_nonzero[(1,)](x, y, 3, N=4)
    assert y.tolist() == [0.0, 1.0, 0.0, 7.0]


def test_not_of_a_tensor_is_false_in_the_bare_interpreter():
    proc = bare("""
        @triton.jit
        def k(x_ptr, y_ptr, N: tl.constexpr):
            offsets = tl.arange(0, N)
            keep = not (tl.load(x_ptr + offsets) == 0.0)
            tl.store(y_ptr + offsets, offsets * 0 + keep)
        y = torch.zeros(4)
        k[(1,)](torch.tensor([0.0, 2.0, 0.0, -1.0]), y, N=4)
        print(*y.tolist())
    """)
    assert proc.stdout.split() == ["0.0"] * 4, proc.stderr[-2000:]


def test_a_scalar_comparison_and_a_block_mask_make_a_bool_mask():
    x = torch.arange(12.0).reshape(3, 4)
    y = torch.zeros(3, 4)
    copy_rows[(3,)](x, y, 3, 4, BLOCK_W=8)
    assert torch.equal(y, x)
    assert triton.runtime.interpreter.InterpreterBuilder.create_icmpSLT.__name__ == "compare"


def test_a_scalar_comparison_splats_as_int32_in_the_bare_interpreter():
    proc = bare("""
        @triton.jit
        def k(x_ptr, y_ptr, B, W, BLOCK_W: tl.constexpr):
            row = tl.program_id(0)
            offsets = tl.arange(0, BLOCK_W)
            mask = (offsets < W) & (row < B)
            tl.store(y_ptr + row * W + offsets, tl.load(x_ptr + row * W + offsets, mask=mask, other=0), mask=mask)
        k[(3,)](torch.ones(3, 4), torch.zeros(3, 4), 3, 4, BLOCK_W=8)
    """)
    assert proc.returncode != 0 and "mask has unsupported dtype" in proc.stderr, proc.stderr[-2000:]


def test_a_batched_access_leaves_a_mask_that_is_not_bool_to_the_interpreter():
    from gpuemu.frameworks._triton_batch_memory import _Lanes  # lazy: the batching layer is not installed here

    ptrs = np.array([64, 68, 72], dtype=np.uint64)
    assert _Lanes(ptrs, np.array([True, False, True]), 4, None).index is not None
    # numpy would read an int mask as indices (lanes 1, 0, 1); the interpreter's loop refuses it
    assert _Lanes(ptrs, np.array([1, 0, 1], dtype=np.int32), 4, None).index is None


def test_bool_op_short_circuits_compile_time_values_as_the_compiler():
    from gpuemu.frameworks._triton_boolop import bool_op

    assert bool_op(True, lambda: 0, lambda: 1 / 0) == 0
    assert bool_op(False, lambda: 3, lambda: 1 / 0) == 3
    assert bool_op(True, lambda: 1, lambda: 2) == 2


class SelfTuner(triton.runtime.Autotuner):
    """A library's tuner (FlagGems' LibTuner): its own run, which benchmarks every config."""

    def run(self, *args, **kwargs):
        self.nargs = dict(zip(self.arg_names, args))
        timings = {config: self._bench(*args, config=config, **kwargs) for config in self.configs}
        return self.fn.run(*args, **kwargs, **min(timings, key=timings.get).all_kwargs())


class LibEntry(triton.KernelInterface):
    """A library's launch cache over a tuner: only `.fn`, as FlagGems' LibEntry."""

    def __init__(self, fn):
        self.fn, self.arg_names = fn, fn.arg_names

    def run(self, *args, **kwargs):
        return self.fn.run(*args, **kwargs)


with interpreting():
    @triton.jit
    def scale(x_ptr, y_ptr, FACTOR: tl.constexpr, N: tl.constexpr):
        offsets = tl.arange(0, N)
        tl.store(y_ptr + offsets, tl.load(x_ptr + offsets) * FACTOR)

    tuned_scale = LibEntry(SelfTuner(scale, scale.arg_names,
                                     [triton.Config({"FACTOR": 2}), triton.Config({"FACTOR": 3})],
                                     key=[], reset_to_zero=None, restore_value=None))


def test_autotuner_subclass_is_pinned_never_benchmarked_and_listed(monkeypatch):
    assert triton_autotune.install()
    x, y = torch.ones(4), torch.zeros(4)
    tuned_scale[(1,)](x, y, N=4)  # no pin: the first config, no benchmark (which needs a GPU driver)
    assert torch.equal(y, torch.full((4,), 2.0))
    monkeypatch.setenv(triton_autotune.PIN_VARIABLE, "FACTOR=3,num_warps=4")
    tuned_scale[(1,)](x, y, N=4)
    assert torch.equal(y, torch.full((4,), 3.0))

    class LaterTuner(SelfTuner):  # defined after the install: pinned too
        def run(self, *args, **kwargs):
            raise AssertionError("benchmarked")

    LaterTuner(scale, scale.arg_names, [triton.Config({"FACTOR": 5})], key=[], reset_to_zero=None,
               restore_value=None).run(x, y, grid=(1,), warmup=False, N=4)
    assert torch.equal(y, torch.full((4,), 5.0))

    def op(x):
        return tuned_scale[(1,)](x, x, N=4)

    listed = triton_autotune.discover(op)
    assert [(k["name"], k["configs"]) for k in listed] == [("scale", ["FACTOR=2,num_warps=4", "FACTOR=3,num_warps=4"])]


def test_autotuner_subclass_benchmarks_in_the_bare_interpreter():
    proc = bare("""
        class SelfTuner(triton.runtime.Autotuner):
            def run(self, *args, **kwargs):
                self.nargs = dict(zip(self.arg_names, args))
                timings = {c: self._bench(*args, config=c, **kwargs) for c in self.configs}
                return self.fn.run(*args, **kwargs, **min(timings, key=timings.get).all_kwargs())
        @triton.jit
        def k(x_ptr, F: tl.constexpr):
            tl.store(x_ptr, F)
        t = SelfTuner(k, k.arg_names, [triton.Config({"F": 1}), triton.Config({"F": 2})], key=[], reset_to_zero=None,
                      restore_value=None)
        t[(1,)](torch.zeros(1))
    """)
    assert proc.returncode != 0 and "driver" in proc.stderr, proc.stderr[-2000:]


def test_cuda_device_context_answers_under_the_shim_and_refuses_without():
    code = """
        import os, torch
        os.environ["TRITON_INTERPRET"] = "1"
        from gpuemu.frameworks import triton_hook
        triton_hook.arm()
        import triton
        x = torch.zeros(2)
        try:
            with torch.cuda.device(x.device):
                print("entered", torch.cuda.device_count(), torch.cuda.current_device())
        except Exception as exc:
            print(type(exc).__name__, torch.cuda.device_count())
    """
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": os.pathsep.join(sys.path)}

    def run(**extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env={**env, **extra},
                              capture_output=True, text=True, timeout=300)

    shimmed, refused = run(GPUEMU_TRITON_CUDA_SHIM="1"), run()
    assert shimmed.stdout.split() == ["entered", "1", "0"], shimmed.stderr[-2000:]
    assert refused.stdout.split() == ["InterpreterUnsupportedError", "0"], refused.stderr[-2000:]


def _library_call(tmp_path, body: str):
    """Calls a function of a library file written to tmp_path, returns the exception it raised."""
    path = tmp_path / "cudalib.py"
    path.write_text(textwrap.dedent(body))
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    with pytest.raises(Exception) as info:
        namespace["op"](torch.zeros(2))
    return info.value, str(path)


@pytest.mark.parametrize("body, line", [
    ("def op(x):\n    assert x.is_cuda\n", 2),
    ("def op(x):\n    if x.device.type != 'cuda':\n        raise RuntimeError('Tensors must be CUDA tensors')\n", 3),
    ("def op(x):\n    raise NotImplementedError('CPU only. There seems a mistake to dispatch to here')\n", 2),
    ("device = 'cuda'\ndef op(x):\n    assert x.device.type == device\n", 3),
])
def test_library_refusing_cpu_tensors_is_interpreter_unsupported_with_its_line(tmp_path, body, line):
    exc, path = _library_call(tmp_path, body)
    refused = cuda_refusal.refusal(exc)
    assert isinstance(refused, InterpreterUnsupportedError) and refused.kind == "interpreter_unsupported"
    assert f"cudalib.py:{line}" in str(refused), str(refused)


def test_other_errors_and_runs_off_the_interpreter_stay_the_ops_errors(tmp_path, monkeypatch):
    exc, _ = _library_call(tmp_path, "def op(x):\n    assert x.shape[0] == 3, 'wrong rows'\n")
    assert cuda_refusal.refusal(exc) is None
    exc, _ = _library_call(tmp_path, "def op(x):\n    assert x.is_cuda\n")
    monkeypatch.setenv("TRITON_INTERPRET", "0")  # on a GPU run the assert is the op's own failure
    assert cuda_refusal.refusal(exc) is None


def test_bfloat16_max_with_indices_to_a_scalar():
    x = torch.tensor([0.5, -1.0, 3.25, 2.0], dtype=torch.bfloat16)
    value, index = torch.zeros(1, dtype=torch.bfloat16), torch.zeros(1, dtype=torch.int32)
    argmax_row[(1,)](x, value, index, N=4)  # was "Value argument cannot be block type ..." (a block of 1)
    assert value.item() == 3.25 and index.item() == 2


def test_sanitizer_takes_grid_sizes_the_grid_function_computed_from_tensors():
    y = torch.zeros(3)
    token = _CASE_RUN.set(CaseRun(1))
    triton_sanitizer.install()
    try:  # the interpreter hands a grid function the converted arguments: n is a scalar tensor here
        fill_grid[lambda meta: (1, meta["n"])](y, 3)
    finally:
        triton_sanitizer.uninstall()
        _CASE_RUN.reset(token)
    assert torch.equal(y, torch.ones(3))


def test_a_function_without_source_stays_an_interpreted_function():
    namespace = {"tl": tl}
    exec("def k(x_ptr):\n    pass\n", namespace)
    kernel = triton.jit(namespace["k"])
    assert type(kernel) is triton.runtime.interpreter.InterpretedFunction
