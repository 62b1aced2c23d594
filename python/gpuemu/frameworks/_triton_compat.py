# Makes Triton's CPU interpreter compute what the compiler would, in an op's worker (issue 30): float
# arguments, pointer-like arguments, libdevice, bfloat16 arithmetic, and torch.cuda calls around kernels.
"""The Triton compatibility layer (docs/frameworks.md, "What the interpreter gets wrong").

Installed by :mod:`gpuemu.frameworks.triton_hook` once ``triton`` is imported in a process whose
``TRITON_INTERPRET`` is 1; it changes nothing on a GPU run. Each bridge patches one piece of
``triton.runtime.interpreter`` (the same objects in the releases of :data:`KNOWN_VERSIONS`):

- a Python float argument becomes an fp32 scalar, as the compiler specialises it (``eps.to(...)``);
- an argument with ``data_ptr()`` and ``dtype`` that is no torch tensor is a pointer, as on a GPU;
  a pointer argument whose ``data_ptr()`` is 0 (an empty tensor) fails the case (out_of_bounds)
  when a lane dereferences it, instead of crashing the worker;
- every function of every libdevice module runs (:mod:`gpuemu.frameworks._triton_libdevice`), with
  the compiler's own dispatch table choosing types;
- bfloat16 arithmetic, comparisons, casts, reductions, scans and ``tl.dot`` compute in fp32 and
  round to nearest even, where the interpreter did integer arithmetic on the 16-bit patterns;
- ``torch.cuda`` device queries around a launch raise InterpreterUnsupportedError naming the call,
  or answer as one CPU device when the op opts in (``interpreter_cuda_shim = true``, which gpuemu
  passes to the worker as ``GPUEMU_TRITON_CUDA_SHIM=1``).

What still cannot run raises :class:`gpuemu.errors.InterpreterUnsupportedError` naming the
construct and the kernel's ``file:line``; errors the layer raises inside a kernel
(``CaseFailure``s, the sanitizer's too) leave the interpreter unwrapped, so the case gets their kind.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import types
from pathlib import Path
from typing import Any, Callable

import numpy as np
import triton
import triton.language as tl
from triton.runtime import interpreter as interp

from gpuemu.errors import CaseFailure, InterpreterUnsupportedError, OutOfBoundsError
from gpuemu.frameworks import _triton_libdevice as triton_libdevice

__all__ = ["KNOWN_VERSIONS", "install", "installed", "kernel_location", "bf16_to_f32", "f32_to_bf16"]

# Triton releases whose interpreter this layer was checked against (major, minor).
KNOWN_VERSIONS = ((3, 9),)
CUDA_SHIM_ENV = "GPUEMU_TRITON_CUDA_SHIM"
LIBDEVICE_MODULES = ("triton.language.extra.libdevice", "triton.language.extra.cuda.libdevice",
                     "triton.language.extra.hip.libdevice")

_state: dict[str, Any] = {"installed": False, "torch": False, "null_pointers": {}}
_SKIPPED_DIRS = tuple(str(Path(m.__file__).resolve().parent) for m in (triton, np)) + (
    str(Path(__file__).resolve().parents[1]),)


def installed() -> bool:
    return bool(_state["installed"])


def _where(filename: str, line: int) -> str:
    """file:line, relative to the working directory (the project's root in a worker) when inside it."""
    with contextlib.suppress(ValueError):
        filename = os.path.relpath(filename) if Path(filename).resolve().is_relative_to(Path.cwd()) else filename
    return f"{filename}:{line}"


def kernel_location() -> str:
    """file:line of the innermost frame of the user's code (the kernel or a @triton.jit helper)."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith(_SKIPPED_DIRS) and not name.startswith("<"):
            return _where(name, frame.f_lineno)
        frame = frame.f_back
    return "<unknown>"


def _unsupported(construct: str) -> InterpreterUnsupportedError:
    return InterpreterUnsupportedError(
        f"{construct} at {kernel_location()}: Triton {triton.__version__}'s CPU interpreter cannot run it, a limit "
        "of the interpreter, not a bug of the kernel (a GPU runner with triton_interpret = \"auto\" checks it)")


# ─── bfloat16 as fp32 ────────────────────────────────────────────────────────────────────────
def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    """bfloat16 bit patterns (uint16) -> exact float32 values."""
    return (np.asarray(bits).astype(np.uint32) << np.uint32(16)).view(np.float32)


def f32_to_bf16(values: np.ndarray) -> np.ndarray:
    """float32 values -> bfloat16 bit patterns, rounded to nearest even (NaN stays NaN)."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32)  # 0-d stays 0-d (a reduction's scalar)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    nan = (bits & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    return np.where(nan, (bits >> np.uint32(16)) | np.uint32(0x40), rounded).astype(np.uint16)


def _is_bf16(handle: Any) -> bool:
    return isinstance(handle, interp.TensorHandle) and handle.dtype == tl.bfloat16


def _as_f32(handle: Any) -> Any:
    return interp.TensorHandle(bf16_to_f32(handle.data), tl.float32) if _is_bf16(handle) else handle


def _bf16_op(original: Callable, operands: int) -> Callable:
    """A builder method that computes bfloat16 operands in fp32 and rounds a float result back."""

    def method(self, *args):
        if not any(_is_bf16(a) for a in args[:operands]):
            return original(self, *args)
        out = original(self, *(_as_f32(a) if i < operands else a for i, a in enumerate(args)))
        if out.data.dtype == np.float32:
            return interp.TensorHandle(f32_to_bf16(out.data), tl.bfloat16)
        return out

    return method


_UNARY = ("create_fneg", "create_cos", "create_exp", "create_exp2", "create_floor", "create_ceil", "create_log",
          "create_log2", "create_precise_sqrt", "create_sqrt", "create_sin", "create_erf", "create_rsqrt")
_BINARY = ("create_fadd", "create_fmul", "create_fdiv", "create_frem", "create_fsub", "create_precise_divf",
           "create_approx_divf", "create_minimumf", "create_minnumf", "create_maximumf", "create_maxnumf") + tuple(
    f"create_fcmp{c}" for c in ("OLT", "OGT", "OLE", "OGE", "OEQ", "ONE", "ULT", "UGT", "ULE", "UGE", "UEQ", "UNE"))
_TERNARY = ("create_fma", "create_clampf")


def _patch_bf16(builder: type) -> None:
    for names, operands in ((_UNARY, 1), (_BINARY, 2), (_TERNARY, 3)):
        for name in names:
            setattr(builder, name, _bf16_op(getattr(builder, name), operands))
    cast_impl, fp_to_fp, dot = builder.cast_impl, builder.create_fp_to_fp, builder.create_dot

    def cast(self, src, dst_type):
        source, target = src.dtype.scalar, dst_type.scalar
        if source != tl.bfloat16 and target != tl.bfloat16:
            return cast_impl(self, src, dst_type)
        if source == target:
            return interp.TensorHandle(src.data.copy(), tl.bfloat16)
        values = bf16_to_f32(src.data) if source == tl.bfloat16 else src.data
        if target == tl.bfloat16:
            with np.errstate(over="ignore", invalid="ignore"):
                return interp.TensorHandle(f32_to_bf16(values.astype(np.float32)), tl.bfloat16)
        return cast_impl(self, interp.TensorHandle(values, tl.float32), dst_type)

    def fp_to_fp(self, src, dst_type, rounding_mode):
        source, target = src.dtype.scalar, dst_type.scalar
        if target == tl.bfloat16 and source != tl.bfloat16 and rounding_mode == interp._ir.ROUNDING_MODE.RTZ:
            values = np.ascontiguousarray(cast(self, src, tl.float32).data, dtype=np.float32)
            truncated = (values.view(np.uint32) >> np.uint32(16)).astype(np.uint16)
            return interp.TensorHandle(np.where(np.isnan(values), np.uint16(0x7FC0), truncated), tl.bfloat16)
        if source == tl.bfloat16 or target == tl.bfloat16:
            if source != tl.bfloat16 and source.primitive_bitwidth == 8:  # fp8 -> fp32 first, as the compiler
                src = fp_to_fp(self, src, tl.float32, rounding_mode)
            if target.primitive_bitwidth == 8:
                return fp_to_fp(self, cast(self, src, tl.float32), dst_type, rounding_mode)
            return cast(self, src, dst_type)
        return fp_to_fp(self, src, dst_type, rounding_mode)

    def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        out = dot(self, _as_f32(a), _as_f32(b), _as_f32(d), input_precision, max_num_imprecise_acc)
        return interp.TensorHandle(f32_to_bf16(out.data), tl.bfloat16) if _is_bf16(d) else out

    atomic_rmw = builder.create_atomic_rmw

    def create_atomic_rmw(self, rmw_op, ptr, val, mask, sem, scope):
        """bfloat16 tl.atomic_add (the only bfloat16 atomic the compiler takes; the interpreter's atomics have
        no 16-bit float): lane by lane in order, as the interpreter runs one program at a time."""
        if not _is_bf16(val):
            return atomic_rmw(self, rmw_op, ptr, val, mask, sem, scope)
        ops = interp._ir.ATOMIC_OP
        if rmw_op != ops.FADD:
            raise _unsupported(f"a bfloat16 atomic {rmw_op}")
        ptrs, values, enabled = np.broadcast_arrays(ptr.data, val.data, mask.data)
        old = np.zeros(ptrs.shape, dtype=np.uint16)
        one, zero = np.ones(1, dtype=bool), np.zeros(1, dtype=np.uint16)
        for index in np.ndindex(ptrs.shape):
            if not enabled[index]:
                continue
            address = np.array([ptrs[index]], dtype=np.uint64)
            current = interp._interpreter.load(address, one, zero, np.dtype(np.uint16))
            new = f32_to_bf16(bf16_to_f32(current) + bf16_to_f32(values[index]))
            interp._interpreter.store(address, np.asarray(new, dtype=np.uint16).reshape(1), one)
            old[index] = current[0]
        return interp.TensorHandle(old, tl.bfloat16)

    # create_fp_ext, create_fp_trunc, create_si_to_fp, ... call self.cast_impl: they follow it.
    builder.cast_impl, builder.create_fp_to_fp, builder.create_dot = cast, fp_to_fp, create_dot
    builder.create_atomic_rmw = create_atomic_rmw


def _decoded(t: Any) -> Any:
    return tl.core.tensor(interp.TensorHandle(bf16_to_f32(t.handle.data), tl.float32),
                          t.type.with_element_ty(tl.float32) if t.type.is_block() else tl.float32)


def _patch_bf16_reductions() -> None:
    reduce_sum, min_max = interp.ReduceOps.sum, interp.ReduceOps.min_max
    cumsum, cumprod = interp.ScanOps.cumsum, interp.ScanOps.cumprod

    def total(self, input):
        if input.dtype.scalar != tl.bfloat16:
            return reduce_sum(self, input)
        values = np.sum(bf16_to_f32(input.handle.data), axis=self.axis, keepdims=self.keep_dims, dtype=np.float32)
        return self.to_tensor(f32_to_bf16(values), input.dtype)

    def extreme(self, input, val_reduce_op, idx_reduce_op=None):
        first = input[0] if isinstance(input, tuple) else input
        if first.dtype.scalar != tl.bfloat16:
            return min_max(self, input, val_reduce_op, idx_reduce_op)
        out = min_max(self, _decoded(first), val_reduce_op, idx_reduce_op)
        val = out[0] if isinstance(out, tuple) else out
        if val_reduce_op is None:
            return out
        # A scalar result holds its value as shape (1,): reshaped to 0-d, it stays a scalar (not a block of 1).
        data = val.handle.data if val.type.is_block() else val.handle.data.reshape(())
        val = self.to_tensor(f32_to_bf16(data), first.dtype)
        return (val, out[1]) if isinstance(out, tuple) else val

    def scan(original: Callable, op: Callable) -> Callable:
        def method(self, input):
            if input.dtype.scalar != tl.bfloat16:
                return original(self, input)
            values = op(bf16_to_f32(input.handle.data), axis=self.axis, dtype=np.float32)
            return [self.to_tensor(f32_to_bf16(values), dtype=input.dtype)]

        return method

    interp.ReduceOps.sum, interp.ReduceOps.min_max = total, extreme
    interp.ScanOps.cumsum, interp.ScanOps.cumprod = scan(cumsum, np.cumsum), scan(cumprod, np.cumprod)


# ─── kernel arguments ────────────────────────────────────────────────────────────────────────
def _is_foreign_pointer(arg: Any) -> bool:
    """An object a GPU launch takes as a pointer (data_ptr() and dtype) that is no torch tensor: a GPU
    launch reads only those two, so a duck-typed tensor (FlagGems' StridedBuffer, with shape, stride()
    and untyped_storage() too) is one as well; it is host memory already, no copy is made."""
    if not (hasattr(arg, "data_ptr") and hasattr(arg, "dtype")) or \
            isinstance(arg, (type, triton.runtime.jit.TensorWrapper)):
        return False
    torch = sys.modules.get("torch")
    return torch is None or not isinstance(arg, torch.Tensor)


class _Opaque:
    """Hides a foreign pointer from the interpreter's copy to and from the host (it is host memory)."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any):
        self.obj = obj


def _hide(arg: Any) -> Any:
    if isinstance(arg, tuple) and not hasattr(arg, "_fields"):
        return tuple(_hide(a) for a in arg)
    return _Opaque(arg) if _is_foreign_pointer(arg) else arg


def _show(arg: Any) -> Any:
    if isinstance(arg, tuple) and not hasattr(arg, "_fields"):
        return tuple(_show(a) for a in arg)
    return arg.obj if isinstance(arg, _Opaque) else arg


def _patch_arguments() -> None:
    implicit_cvt = interp._implicit_cvt

    def convert(arg):
        if isinstance(arg, float):  # the compiler's specialisation of a float (numpy.float64 too): fp32
            with np.errstate(over="ignore"):
                handle = interp.TensorHandle(np.array([arg], dtype=np.float32), tl.float32)
            return tl.tensor(handle, tl.float32)
        if isinstance(arg, np.floating):
            raise TypeError(f"a numpy.{type(arg).__name__} kernel argument ({arg!r}): Triton's launcher refuses it "
                            f"on a GPU ('failed to specialize argument of type: {type(arg).__name__}'); pass float(x)")
        return implicit_cvt(arg)

    interp._implicit_cvt = convert
    executor = interp.GridExecutor
    init_args, restore_args, call = executor._init_args_hst, executor._restore_args_dev, executor.__call__

    def init_args_hst(self, args_dev, kwargs):
        args, kw = init_args(self, [_hide(a) for a in args_dev], {k: _hide(v) for k, v in kwargs.items()})
        return [_show(a) for a in args], {k: _show(v) for k, v in kw.items()}

    def restore_args_dev(self, args_dev, args_hst, kwargs, kwargs_hst):
        return restore_args(self, [_hide(a) for a in args_dev], [_hide(a) for a in args_hst],
                            {k: _hide(v) for k, v in kwargs.items()}, {k: _hide(v) for k, v in kwargs_hst.items()})

    def launch(self, *args, **kwargs):
        _state["null_pointers"] = _null_pointers(self.arg_names, args, kwargs)
        try:
            return call(self, *args, **kwargs)
        except interp.InterpreterError as exc:
            cause = exc.__cause__
            while isinstance(cause, interp.InterpreterError):  # a @triton.jit helper's error, wrapped twice
                cause = cause.__cause__
            if isinstance(cause, CaseFailure):  # the layer's (or the sanitizer's) verdict, not a kernel error
                raise cause.with_traceback(cause.__traceback__) from None
            raise
        finally:
            _state["null_pointers"] = {}

    executor._init_args_hst, executor._restore_args_dev, executor.__call__ = init_args_hst, restore_args_dev, launch


def _null_pointers(names: list, args: tuple, kwargs: dict) -> dict:
    named = dict(zip(names, args))
    named.update(kwargs)
    return {name: value for name, value in named.items()
            if hasattr(value, "data_ptr") and not isinstance(value, type) and value.data_ptr() == 0}


def _patch_null_pointers(builder: type) -> None:
    load, store = builder.create_masked_load, builder.create_masked_store

    def check(ptrs, mask, what: str) -> None:
        nulls = _state["null_pointers"]
        if not nulls:
            return
        enabled = np.broadcast_to(mask.data, ptrs.data.shape) if mask is not None else True
        if np.any((ptrs.data < 4096) & enabled):
            raise OutOfBoundsError(
                f"a {what} at {kernel_location()} (program {interp.interpreter_builder.grid_idx}) dereferences "
                f"kernel argument {', '.join(sorted(nulls))}, whose data_ptr() is 0 (an empty tensor): on a GPU this "
                "reads or writes address 0; mask the lanes of an empty tensor off, or skip the launch")

    def masked_load(self, ptrs, mask, other, cache_policy, is_volatile):
        check(ptrs, mask, "load")
        return load(self, ptrs, mask, other, cache_policy, is_volatile)

    def masked_store(self, ptrs, value, mask, cache_policy):
        check(ptrs, mask, "store")
        return store(self, ptrs, value, mask, cache_policy)

    builder.create_masked_load, builder.create_masked_store = masked_load, masked_store


# ─── libdevice and other externs ─────────────────────────────────────────────────────────────
_CURRENT: list[str] = []  # the libdevice function being dispatched (innermost last)


def _libdevice_function(module_name: str, name: str, target: Callable | None) -> Callable:
    """The interpreter's version of libdevice function `name`: the compiler's dispatch (target, a
    cuda or hip extern) with the interpreter's semantic, computed by triton_libdevice."""

    def fn(*args, _semantic=None, **kwargs):
        if target is None:
            raise _unsupported(f"{module_name}.{name} (in no libdevice backend of this Triton)")
        if not triton_libdevice.mapped(name):
            raise _unsupported(f"libdevice.{name}")
        _CURRENT.append(name)
        try:
            return target(*args, _semantic=interp.interpreter_semantic, **kwargs)
        except KeyError as exc:  # the dispatch table has no entry for these argument types
            raise TypeError(f"libdevice.{name} at {kernel_location()} has no version for arguments of types "
                            f"{exc.args[0] if exc.args else '?'}; the compiler rejects this call too: convert "
                            "the arguments (e.g. x.to(tl.float32)) first") from None
        finally:
            _CURRENT.pop()

    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = module_name
    fn.__gpuemu_libdevice__ = True
    fn.__triton_builtin__ = True  # as the extern it stands for: a JITFunction's cache_key skips builtins
    return fn


def _patch_libdevice(builder: type) -> None:
    modules = {name: sys.modules.get(name) for name in LIBDEVICE_MODULES}
    backends = [m for n, m in modules.items() if m is not None and n != LIBDEVICE_MODULES[0]]
    originals = _state.setdefault("libdevice_originals", {})
    for module_name, module in modules.items():
        if module is None:
            continue
        for name, value in list(vars(module).items()):
            if name.startswith("_") or not isinstance(value, types.FunctionType) or \
                    getattr(value, "__gpuemu_libdevice__", False) or value.__module__ != module_name:
                continue
            if module_name == LIBDEVICE_MODULES[0]:  # the stub: the backend's function, as the compiler maps it
                target = next((getattr(b, name) for b in backends if hasattr(b, name)), None)
                target = getattr(target, "__wrapped_extern__", target)
            else:
                target = value
            wrapper = _libdevice_function(module_name, name, target)
            wrapper.__wrapped_extern__ = target
            setattr(module, name, wrapper)
            # the original is kept: were it freed, a new object (a wrapper) could take its id
            originals[id(value)] = (value, wrapper)

    def extern_elementwise(self, lib_name, lib_path, symbol, arg_list, ret_type, is_pure):
        if not _CURRENT:
            raise _unsupported(f"tl.extern_elementwise ({symbol} of {lib_name or lib_path or 'a library'})")
        out = interp._get_np_dtype(ret_type)
        data = triton_libdevice.evaluate(_CURRENT[-1], [np.asarray(a.data) for a in arg_list], out)
        return interp.TensorHandle(np.asarray(data, dtype=out), ret_type.scalar)

    def inline_asm(self, inline_asm, constraints, values, type, is_pure, pack):
        raise _unsupported("tl.inline_asm_elementwise")

    builder.create_extern_elementwise, builder.create_inline_asm = extern_elementwise, inline_asm


def _patch_stale_imports() -> None:
    """Before each launch: names the kernel's module bound to libdevice functions before the layer
    was installed (`from ...libdevice import rsqrt` ran first) point at the layer's versions."""
    patch_lang = interp._patch_lang
    seen: set[int] = set()

    def patched(fn):
        if id(fn) not in seen:
            seen.add(id(fn))
            scope = fn.__globals__
            originals = _state.get("libdevice_originals", {})
            for key, value in list(scope.items()):
                original, wrapper = originals.get(id(value), (None, None))
                if original is value:
                    scope[key] = wrapper
        return patch_lang(fn)

    interp._patch_lang = patched


# ─── torch.cuda around the launch ───────────────────────────────────────────────────────────
class _CpuDeviceProperties:
    """What torch.cuda.get_device_properties answers under the shim: one CPU device."""

    name = "cpu (gpuemu: Triton interpreter)"
    major, minor = 8, 0
    multi_processor_count = 1
    total_memory = 0
    warp_size = 32


def _torch_cuda_calls() -> dict[str, Callable]:
    """The torch.cuda functions the shim answers, and what each answers as one CPU device."""
    return {
        "current_device": lambda: 0,
        "device_count": lambda: 1,
        "set_device": lambda device: None,
        "device": lambda device: contextlib.nullcontext(),
        "get_device_name": lambda device=None: _CpuDeviceProperties.name,
        "get_device_capability": lambda device=None: (_CpuDeviceProperties.major, _CpuDeviceProperties.minor),
        "get_device_properties": lambda device=None: _CpuDeviceProperties(),
        "synchronize": lambda device=None: None,
    }


# Left as torch answers (0) without the shim: torch itself asks it (is_available under NVML), and 0 is true.
_ANSWERED_ONLY_UNDER_SHIM = ("device_count",)


def _patch_torch_cuda() -> None:
    if _state["torch"] or "torch" not in sys.modules:
        return
    cuda = sys.modules["torch"].cuda
    shim = os.environ.get(CUDA_SHIM_ENV, "0").strip() == "1"
    for name, answer in _torch_cuda_calls().items():
        if not hasattr(cuda, name) or (name in _ANSWERED_ONLY_UNDER_SHIM and not shim):
            continue
        setattr(cuda, name, answer if shim else _refusal(name))
    _state["torch"] = True


def _refusal(name: str) -> Callable:
    def refuse(*args, **kwargs):
        caller = sys._getframe(1)
        raise InterpreterUnsupportedError(
            f"torch.cuda.{name}() at {_where(caller.f_code.co_filename, caller.f_lineno)}: no CUDA device under "
            "Triton's CPU interpreter (a limit of the interpreter run, not a bug of the kernel); set "
            "interpreter_cuda_shim = true on the op in gpuemu.toml to let such calls answer as one CPU device "
            "(current_device() 0, capability (8, 0))")

    refuse.__name__ = name
    return refuse


# ─── installing ──────────────────────────────────────────────────────────────────────────────
def _version() -> tuple[int, int]:
    parts = (triton.__version__.split("+")[0].split(".") + ["0", "0"])[:2]
    return int(parts[0]), int("".join(ch for ch in parts[1] if ch.isdigit()) or 0)


def install() -> bool:
    """Installs the layer (once); False and no change when TRITON_INTERPRET is not 1. Also patches
    torch.cuda when torch is imported (call again after it is)."""
    if os.environ.get("TRITON_INTERPRET", "0").strip() != "1":
        return False
    if not _state["installed"]:
        if _version() not in KNOWN_VERSIONS:
            known = ", ".join(f"{a}.{b}" for a, b in KNOWN_VERSIONS)
            print(f"gpuemu: warning: the Triton compatibility layer knows Triton {known}; this is Triton "
                  f"{triton.__version__}: its interpreter bridges were applied where that interpreter's internals "
                  "match and may not fit it (docs/frameworks.md)", file=sys.stderr, flush=True)
        # The stub module is not imported by `import triton`, and kernels import names from it.
        importlib.import_module(LIBDEVICE_MODULES[0])

        builder = interp.InterpreterBuilder
        _patch_bf16(builder)
        _patch_bf16_reductions()
        _patch_arguments()
        _patch_null_pointers(builder)
        _patch_libdevice(builder)
        _patch_stale_imports()
        _state["installed"] = True
    _patch_torch_cuda()
    return True
