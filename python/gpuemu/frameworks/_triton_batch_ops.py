# The interpreter's builder, reductions and tensor conversions taught a leading program axis, for the
# batched launches of _triton_batch.py: every value's data is (1 or P,) + its Triton shape while a group runs.
"""Builder adaptations for batched Triton launches (docs/frameworks.md, "Batched launches").

While a group of programs runs (``state.active``), every ``TensorHandle.data`` carries a leading
program axis: size 1 for a value all programs of the group share (an argument, a constant, an
``arange``), size P for one that differs (anything derived from ``program_id`` or loaded through such
a pointer). Elementwise builder methods need nothing: numpy broadcasts (1, ...) against (P, ...). The
methods below are the ones that name axes or shapes; each shifts them past the program axis. Out of a
group (``state.active`` false) every patched method is the interpreter's own.

A Python decision on a value that differs between programs (``if``, ``while``, ``range``, ``int()``)
raises :class:`Divergence`; an operation this module cannot run for many programs at once raises
:class:`Unbatchable`: the executor then splits the group, or runs it one program at a time.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpuemu.frameworks import _triton_batch_memory as triton_batch_memory

__all__ = ["Divergence", "Unbatchable", "state", "install", "undo", "logical_shape", "per_program", "uniform_value"]


class Divergence(Exception):
    """Python control flow depends on a value that differs between the programs of a group."""

    def __init__(self, values: np.ndarray, what: str, where: str):
        super().__init__(f"{what} at {where} differs between programs")
        self.values, self.what, self.where = values, what, where


class Unbatchable(Exception):
    """An operation the batched builder does not run for many programs at once."""

    def __init__(self, what: str, where: str):
        super().__init__(f"{what} at {where}")
        self.what, self.where = what, where


class _State:
    """The group now running: its program ids per grid axis, and the undo log of its writes."""

    def __init__(self) -> None:
        self.active = False
        self.pids: list[np.ndarray] = []  # per axis: (P, 1) int32, or (1, 1) when the group shares it
        self.undo: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (ptrs, old values, mask), flat
        self.size = 1  # programs in the group
        self.largest = 1  # the largest block (elements of one program) seen while the group ran

    def seen(self, shape: tuple) -> None:
        size = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if size > self.largest:
            self.largest = size


state = _State()
_interp: Any = None


def _where() -> str:
    # lazy: the compatibility layer imports triton; this module is imported only once triton is
    from gpuemu.frameworks._triton_compat import kernel_location

    return kernel_location()


def logical_shape(data: np.ndarray) -> tuple:
    """A value's Triton shape (its data's shape without the program axis while a group runs)."""
    return tuple(data.shape[1:]) if state.active else tuple(data.shape)


def per_program(pattern: np.ndarray, shape: tuple) -> np.ndarray:
    """pattern repeated over each program's block of a value of data shape `shape` (the same lanes
    of every program get the same element, as when each program runs alone)."""
    if not state.active:
        return np.resize(pattern, shape)
    return np.broadcast_to(np.resize(pattern, shape[1:]), shape)


def uniform_value(data: np.ndarray, what: str) -> Any:
    """The one element of a scalar-shaped value, the same in every program of the group; else Divergence."""
    flat = np.asarray(data).reshape(-1)
    if flat.size > 1:
        first = flat[0]
        same = flat == first
        if not same.all() and not (flat.dtype.kind == "f" and np.isnan(flat).all()):
            raise Divergence(flat, what, _where())
    return flat[0]


def _lead(*arrays: np.ndarray) -> list[np.ndarray]:
    """The arrays with their program axes broadcast to the largest (the rest left as they are)."""
    lead = max(a.shape[0] for a in arrays)
    return [a if a.shape[0] == lead else np.broadcast_to(a, (lead,) + a.shape[1:]) for a in arrays]


def _seen(shape: tuple) -> None:
    state.seen(shape)


# ─── builder methods ─────────────────────────────────────────────────────────────────────────────

_CONSTANTS = ("get_int1", "get_uint8", "get_int8", "get_uint16", "get_int16", "get_uint32", "get_int32", "get_uint64",
              "get_int64", "get_fp16", "get_fp32", "get_fp64", "get_null_value", "get_all_ones_value")
_REFUSED = ("create_print", "create_atomic_poll", "create_make_tensor_descriptor", "create_descriptor_load",
            "create_descriptor_store", "create_descriptor_gather", "create_descriptor_scatter", "create_dot_scaled")


def _constant(original: Any) -> Any:
    def method(self, value):
        out = original(self, value)
        if state.active:
            out.data = out.data.reshape((1,) + out.data.shape)
        return out

    return method


def _refused(name: str, original: Any) -> Any:
    def method(self, *args, **kwargs):
        if state.active:
            raise Unbatchable(f"tl.{name.replace('create_', '')}", _where())
        return original(self, *args, **kwargs)

    return method


def _batched(original: Any, batched: Any) -> Any:
    def method(self, *args):
        return batched(self, *args) if state.active else original(self, *args)

    return method


def _program_id(self, axis):
    return _interp.TensorHandle(state.pids[axis], _interp.tl.int32)


def _num_programs(self, axis):
    return _interp.TensorHandle(np.array([[self.grid_dim[axis]]], dtype=np.int32), _interp.tl.int32)


def _make_range(self, ret_ty, start, stop):
    _seen((stop - start,))
    return _interp.TensorHandle(np.arange(start, stop, dtype=np.int32)[None], _interp.tl.int32)


def _splat(self, ret_ty, arg):
    # A read-only broadcast view, no copy: a builder method that writes into its operand raises, and
    # the group then runs one program at a time (never a wrong answer).
    shape = tuple(ret_ty.shape)
    _seen(shape)
    lead = arg.data.shape[0]
    first = arg.data.reshape(lead, -1)[:, 0].astype(_interp._get_np_dtype(arg.dtype), copy=False)
    return _interp.TensorHandle(np.broadcast_to(first.reshape((lead,) + (1,) * len(shape)), (lead,) + shape),
                                arg.dtype.scalar)


def _unsplat(self, arg):
    lead = arg.data.shape[0]
    return _interp.TensorHandle(arg.data.reshape(lead, -1)[:, :1].astype(_interp._get_np_dtype(arg.dtype)),
                                arg.dtype.scalar)


def _broadcast(self, arg, shape):
    _seen(tuple(shape))
    return _interp.TensorHandle(np.broadcast_to(arg.data, (arg.data.shape[0],) + tuple(shape)), arg.dtype.scalar)


def _expand_dims(self, arg, axis):
    if axis < 0:
        axis += arg.data.ndim  # the logical rank + 1, as the result's
    return _interp.TensorHandle(np.expand_dims(arg.data, axis + 1), arg.dtype.scalar)


def _reshape(self, arg, shape, allow_reorder):
    return _interp.TensorHandle(arg.data.reshape((arg.data.shape[0],) + tuple(shape)), arg.dtype.scalar)


def _trans(self, arg, perm):
    return _interp.TensorHandle(np.transpose(arg.data, (0,) + tuple(p + 1 for p in perm)), arg.dtype.scalar)


def _cat(self, lhs, rhs):
    left, right = _lead(lhs.data, rhs.data)
    return _interp.TensorHandle(np.concatenate([left, right], axis=1), lhs.dtype.scalar)


def _join(self, lhs, rhs):
    left, right = np.broadcast_arrays(lhs.data, rhs.data)
    return _interp.TensorHandle(np.stack([left, right], axis=-1), lhs.dtype.scalar)


def _gather(self, src, indices, axis):
    source, index = _lead(src.data, indices.data)
    return _interp.TensorHandle(np.take_along_axis(source, index, axis=axis + 1), src.dtype.scalar)


def _histogram(original: Any) -> Any:
    def method(self, data, bins, mask):
        rows = []
        for p in range(data.data.shape[0] if mask is None else max(data.data.shape[0], mask.data.shape[0])):
            row = _interp.TensorHandle(data.data[min(p, data.data.shape[0] - 1)], data.dtype)
            row_mask = None if mask is None else _interp.TensorHandle(mask.data[min(p, mask.data.shape[0] - 1)],
                                                                      mask.dtype)
            rows.append(original(self, row, bins, row_mask).data)
        return _interp.TensorHandle(np.stack(rows), _interp.tl.int32)

    return method


_SHAPED = {
    "create_get_program_id": _program_id, "create_get_num_programs": _num_programs, "create_make_range": _make_range,
    "create_splat": _splat, "create_unsplat": _unsplat, "create_broadcast": _broadcast,
    "create_expand_dims": _expand_dims, "create_reshape": _reshape, "create_trans": _trans, "create_cat": _cat,
    "create_join": _join, "create_gather": _gather,
}


def _patch_builder(builder: type) -> None:
    for name in _CONSTANTS:
        setattr(builder, name, _constant(getattr(builder, name)))
    for name in _REFUSED:
        setattr(builder, name, _refused(name, getattr(builder, name)))
    for name, batched in _SHAPED.items():
        setattr(builder, name, _batched(getattr(builder, name), batched))
    histogram = builder.create_histogram
    setattr(builder, "create_histogram", _batched(histogram, _histogram(histogram)))
    triton_batch_memory.install(builder, _interp, state)


undo = triton_batch_memory.undo

# ─── reductions and scans ────────────────────────────────────────────────────────────────────────


def _tensor(data: np.ndarray, dtype: Any) -> Any:
    """A tl.tensor of data (program axis first): a scalar when data has only the program axis."""
    tl = _interp.tl
    if data.ndim == 1:
        return tl.core.tensor(_interp.TensorHandle(data.reshape(-1, 1), dtype.scalar), dtype.scalar)
    return tl.core.tensor(_interp.TensorHandle(data, dtype.scalar), tl.block_type(dtype.scalar, list(data.shape[1:])))


def _to_tensor(original: Any) -> Any:
    def to_tensor(self, ret, dtype):
        if not state.active:
            return original(self, ret, dtype)
        return _tensor(np.asarray(ret).astype(_interp._get_np_dtype(dtype)), dtype)

    return to_tensor


def _combine_along(self, input: tuple, axis: int, scan: bool) -> list:
    """combine_fn applied along data axis `axis` in order 0, 1, 2, ...: per element, the combinations
    the interpreter's generic reduce (scan) makes, run for every other index of the block at once."""
    datas = _lead(*[t.handle.data for t in input])
    dtypes = [t.dtype for t in input]
    rests = [np.take(d, 0, axis=axis).shape for d in datas]  # (P, the block without `axis`)

    def part(k: int) -> tuple:
        return tuple(_tensor(np.take(d, k, axis=axis), t) for d, t in zip(datas, dtypes))

    def settle(value: Any, data: np.ndarray, rest: tuple) -> np.ndarray:
        """A combine result as the accumulator's array: its shape, the input's dtype (as the interpreter
        writes each result into an array of the input's dtype)."""
        if hasattr(value, "handle"):
            value = value.handle.data
            value = value.reshape((value.shape[0],) + rest[1:]) if len(rest) > 1 else value.reshape(-1)
        return np.broadcast_to(np.asarray(value), rest).astype(data.dtype)

    acc = [np.asarray(np.take(d, 0, axis=axis)) for d in datas]
    steps = [acc]
    for k in range(1, datas[0].shape[axis]):
        out = self.combine_fn.fn(*(_tensor(a, t) for a, t in zip(acc, dtypes)), *part(k))
        out = out if isinstance(out, tuple) else (out,)
        acc = [settle(o, d, r) for o, d, r in zip(out, datas, rests)]
        if scan:
            steps.append(acc)
    if scan:
        return [np.stack([s[j] for s in steps], axis=axis) for j in range(len(input))]
    return acc


def _generic_reduce(original: Any) -> Any:
    def generic_reduce(self, input):
        if not state.active:
            return original(self, input)
        outs = _combine_along(self, input, self.axis, scan=False)
        if self.keep_dims:
            outs = [np.expand_dims(o, self.axis) for o in outs]
        return [self.to_tensor(o, t.dtype) for o, t in zip(outs, input)]

    return generic_reduce


def _generic_scan(original: Any) -> Any:
    def generic_scan(self, input):
        if not state.active:
            return original(self, input)
        return [self.to_tensor(o, t.dtype) for o, t in zip(_combine_along(self, input, self.axis, scan=True), input)]

    return generic_scan


def _reduce_apply(original: Any) -> Any:
    def apply(self, input):
        if not state.active:
            return original(self, input)
        if not isinstance(input, tuple):
            return apply(self, (input,))[0]
        self.check_tensor(input)
        rank = len(input[0].shape)
        if self.axis is None:  # over every element: flatten each program's block, reduce, reshape
            keep = self.keep_dims
            flat = tuple(_tensor(d.reshape(d.shape[0], -1), t.dtype)
                         for d, t in zip(_lead(*[t.handle.data for t in input]), input))
            self.axis, self.keep_dims = 1, False
            ret = self.apply_impl(flat)
            ret = list(ret) if isinstance(ret, (list, tuple)) else [ret]
            if keep:
                ret = [_tensor(r.handle.data.reshape((-1,) + (1,) * rank), r.dtype) for r in ret]
            return tuple(ret)
        self.axis = self.axis + 1 if self.axis >= 0 else self.axis + rank + 1
        ret = self.apply_impl(input)
        return tuple(ret) if isinstance(ret, (list, tuple)) else (ret,)

    return apply


def _scan_apply(original: Any) -> Any:
    def apply(self, input):
        if not state.active:
            return original(self, input)
        if not isinstance(input, tuple):
            return apply(self, (input,))[0]
        self.check_tensor(input)
        rank = len(input[0].shape)
        self.axis = self.axis + 1 if self.axis >= 0 else self.axis + rank + 1
        ret = self.apply_impl(input)
        return tuple(ret) if isinstance(ret, (list, tuple)) else (ret,)

    return apply


# ─── tensor conversions (Python control flow) ────────────────────────────────────────────────────


def lang_overrides(scope: Any) -> None:
    """After the interpreter's _patch_lang: tl.tensor's __bool__, __index__ and .T see the program axis."""
    tensor = _interp.tl.tensor
    bool_, index, transpose = tensor.__bool__, tensor.__index__, tensor.T

    def as_bool(self):
        if not state.active:
            return bool_(self)
        data = self.handle.data
        if data.size // max(1, data.shape[0]) != 1:
            return True  # a block, as the interpreter answers
        return bool(uniform_value(data, "a truth test of a tensor (a Python `if` or `while`; Triton's `if mask`)"))

    def as_index(self):
        if not state.active:
            return index(self)
        return int(uniform_value(self.handle.data, "a loop bound or index (`range`, `int()`) from a tensor"))

    def get_transpose(self):
        if not state.active:
            return transpose.fget(self)
        data = self.handle.data
        handle = _interp.TensorHandle(np.transpose(data, (0,) + tuple(range(data.ndim - 1, 0, -1))), self.handle.dtype)
        shape = list(self.type.shape)
        shape[-1], shape[-2] = shape[-2], shape[-1]
        return _interp.tl.core.tensor(handle, _interp.tl.core.block_type(self.dtype, shape))

    scope.set_attr(tensor, "__bool__", as_bool)
    scope.set_attr(tensor, "__index__", as_index)
    scope.set_attr(tensor, "T", property(get_transpose))


def install(interp: Any) -> None:
    """Patches the interpreter's builder class and reduce/scan classes (once, before the other layers)."""
    global _interp
    _interp = interp
    _patch_builder(interp.InterpreterBuilder)
    base = interp.ReduceScanOpInterface
    base.to_tensor = _to_tensor(base.to_tensor)
    interp.ReduceOps.apply = _reduce_apply(interp.ReduceOps.apply)
    interp.ScanOps.apply = _scan_apply(interp.ScanOps.apply)
    interp.ReduceOps.generic_reduce = _generic_reduce(interp.ReduceOps.generic_reduce)
    interp.ScanOps.generic_scan = _generic_scan(interp.ScanOps.generic_scan)
