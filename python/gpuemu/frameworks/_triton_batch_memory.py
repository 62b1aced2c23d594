# Loads, stores and atomics of a batched Triton launch (_triton_batch.py): every program's lanes in one
# numpy gather or scatter, and an undo log so a group that must run again leaves memory as it found it.
"""Memory access for batched launches (docs/frameworks.md, "Batched launches").

The interpreter's C++ load and store walk the lanes one pointer at a time; for the hundreds of
thousands of lanes of a group, a numpy gather (scatter) through a view of the address range the
enabled lanes span is several times faster and touches exactly the same bytes: masked-off lanes read
nothing and write nothing, and lanes are written in the interpreter's order (program after program,
each block in row-major order), so of two lanes that write one address the later one wins, as when
the programs run one after another. A lane not aligned to its element size takes the C++ path.

Every write of a group is logged first: the bytes of the range it spans (a memcpy, when the pointer
derives from a tensor argument whose storage holds that range, as the sanitizer tags it) or the old
values of its lanes. undo() puts them back, newest first.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from gpuemu.frameworks._triton_bounds import TAG

__all__ = ["install", "undo", "guard_outer_atomics"]

_interp: Any = None
_state: Any = None
_SNAPSHOT_SLACK = 8  # a range up to this many times the written bytes is copied whole (a memcpy beats a gather)


def _view(lo: int, nbytes: int, dtype: np.dtype) -> np.ndarray:
    return np.frombuffer((ctypes.c_char * nbytes).from_address(lo), dtype=dtype)


def _flat(*arrays: np.ndarray) -> list[np.ndarray]:
    return [np.ascontiguousarray(a) for a in np.broadcast_arrays(*arrays)]


def _flat_group(*arrays: np.ndarray) -> list[np.ndarray]:
    """As _flat, with the program axis as long as the group: an atomic runs once per program even when
    every program passes the same operands (each takes its own ticket)."""
    shape = np.broadcast_shapes(*[a.shape for a in arrays])
    shape = (max(shape[0], _state.size),) + shape[1:]
    return [np.ascontiguousarray(np.broadcast_to(a, shape)) for a in arrays]


class _Lanes:
    """The enabled lanes of an access: the address range they lie in and each lane's element index in
    it (None when no lane is enabled, or some lane is not aligned to the element size). For a pointer the
    sanitizer tagged (its lanes already checked to lie in the argument's storage) the range is that
    storage, found without a pass over the lanes. A mask that is not bool is left to the interpreter's
    own loop, which refuses it ("mask has unsupported dtype"): numpy would take it as indices."""

    def __init__(self, ptrs: np.ndarray, mask: np.ndarray, size: int, arg: Any):
        self.all = bool(mask.all())
        self.index = None
        if mask.dtype != np.bool_:
            return
        bits = np.uint64(size - 1)
        if arg is not None and arg.hi > arg.lo and arg.lo % size == 0 and \
                not (int(np.bitwise_or.reduce(ptrs, axis=None)) & (size - 1)):
            self.lo, self.hi = arg.lo, arg.hi
        else:
            enabled = ptrs if self.all else ptrs[np.broadcast_to(mask, ptrs.shape)]
            if enabled.size == 0:
                return
            self.lo, self.hi = int(enabled.min()), int(enabled.max()) + size
            if size > 1 and ((enabled - np.uint64(self.lo)) & bits).any():
                return
        index = ptrs - np.uint64(self.lo)
        if size > 1:
            index >>= np.uint64(size.bit_length() - 1)
        self.index = index if self.all else np.where(mask, index, np.uint64(0))


def _load(original: Any) -> Any:
    def method(self, ptrs, mask, other, cache_policy, is_volatile):
        if not _state.active:
            return original(self, ptrs, mask, other, cache_policy, is_volatile)
        shape = np.broadcast_shapes(ptrs.data.shape, mask.data.shape)
        p = ptrs.data if ptrs.data.shape == shape else np.ascontiguousarray(np.broadcast_to(ptrs.data, shape))
        _state.seen(shape[1:])
        dtype = _interp._get_np_dtype(ptrs.get_element_ty())
        lanes = _Lanes(p, mask.data, dtype.itemsize, ptrs.attr.get(TAG))
        if lanes.index is None:  # nothing enabled, or misaligned: the interpreter's own loop
            arrays = _flat(*([p, mask.data] + ([] if other is None else [other.data])))
            return original(self, _interp.TensorHandle(arrays[0], ptrs.dtype, ptrs.attr),
                            _interp.TensorHandle(arrays[1], mask.dtype),
                            None if other is None else _interp.TensorHandle(arrays[2], other.dtype), cache_policy,
                            is_volatile)
        values = _view(lanes.lo, lanes.hi - lanes.lo, dtype)[lanes.index]
        if not lanes.all:
            values = np.where(mask.data, values, other.data if other is not None else np.zeros((), dtype=dtype))
        return _interp.TensorHandle(values.astype(dtype, copy=False), ptrs.get_element_ty())

    return method


def _snapshot(ptrs: Any, lanes: _Lanes, written: int) -> Any:
    """An undo entry for a write: the whole range's bytes when the sanitizer vouches it lies in one storage
    and it is not much larger than what is written."""
    arg = ptrs.attr.get(TAG)
    span = lanes.hi - lanes.lo
    if arg is not None and arg.lo <= lanes.lo and lanes.hi <= arg.hi and span <= _SNAPSHOT_SLACK * written + 4096:
        return ("bytes", lanes.lo, _view(lanes.lo, span, np.dtype(np.uint8)).copy())
    return None


def _store(original: Any) -> Any:
    def method(self, ptrs, value, mask, cache_policy):
        if not _state.active:
            return original(self, ptrs, value, mask, cache_policy)
        p, v, m = _flat(ptrs.data, value.data, mask.data)
        lanes = _Lanes(p, m, v.dtype.itemsize, ptrs.attr.get(TAG))
        if lanes.index is None:
            _log_lanes(p, m, v.dtype)
            return original(self, _interp.TensorHandle(p, ptrs.dtype, ptrs.attr), _interp.TensorHandle(v, value.dtype),
                            _interp.TensorHandle(m, mask.dtype), cache_policy)
        window = _view(lanes.lo, lanes.hi - lanes.lo, v.dtype)
        index = lanes.index.reshape(-1) if lanes.all else lanes.index[m]
        entry = _snapshot(ptrs, lanes, index.size * v.dtype.itemsize)
        _state.undo.append(entry if entry is not None else ("index", lanes.lo, v.dtype, index, window[index]))
        window[index] = v.reshape(-1) if lanes.all else v[m]  # in order: the last lane of an address wins

    return method


def _log_lanes(p: np.ndarray, m: np.ndarray, dtype: np.dtype) -> None:
    old = _interp._interpreter.load(p, m, np.zeros(p.shape, dtype=dtype), dtype)
    _state.undo.append(("lanes", p.reshape(-1), old.reshape(-1), m.reshape(-1)))


def _atomic_rmw(original: Any) -> Any:
    def method(self, rmw_op, ptr, val, mask, sem, scope):
        if not _state.active:
            return original(self, rmw_op, ptr, val, mask, sem, scope)
        p, v, m = _flat_group(ptr.data, val.data, mask.data)
        out = original(self, rmw_op, _interp.TensorHandle(p, ptr.dtype, ptr.attr),
                       _interp.TensorHandle(v, val.dtype), _interp.TensorHandle(m, mask.dtype), sem, scope)
        # Undone last lane first: a repeated address ends with the value its first lane found.
        _state.undo.append(("lanes", p.reshape(-1)[::-1].copy(), np.asarray(out.data).reshape(-1)[::-1].copy(),
                            m.reshape(-1)[::-1].copy()))
        return out

    return method


def _atomic_cas(original: Any) -> Any:
    def method(self, ptr, cmp, val, sem, scope):
        if not _state.active:
            return original(self, ptr, cmp, val, sem, scope)
        p, c, v = _flat_group(ptr.data, cmp.data, val.data)
        out = original(self, _interp.TensorHandle(p, ptr.dtype, ptr.attr), _interp.TensorHandle(c, cmp.dtype),
                       _interp.TensorHandle(v, val.dtype), sem, scope)
        _state.undo.append(("lanes", p.reshape(-1)[::-1].copy(), np.asarray(out.data).reshape(-1)[::-1].copy(),
                            np.ones(p.size, dtype=bool)))
        return out

    return method


def guard_outer_atomics(builder: type) -> None:
    """Wraps the builder's atomic_rmw as it is now (called at each launch): a layer installed after this
    one (the compatibility layer's bfloat16 atomic_add) may answer without calling the method below it;
    its lanes still need the group's length and a place in the undo log."""
    current = builder.create_atomic_rmw
    if getattr(current, "gpuemu_batch_outer", False):
        return

    def method(self, rmw_op, ptr, val, mask, sem, scope):
        if not _state.active:
            return current(self, rmw_op, ptr, val, mask, sem, scope)
        p, v, m = _flat_group(ptr.data, val.data, mask.data)
        logged = len(_state.undo)
        out = current(self, rmw_op, _interp.TensorHandle(p, ptr.dtype, ptr.attr), _interp.TensorHandle(v, val.dtype),
                      _interp.TensorHandle(m, mask.dtype), sem, scope)
        if len(_state.undo) == logged:  # the method below did not reach this module's own atomic
            _state.undo.append(("lanes", p.reshape(-1)[::-1].copy(), np.asarray(out.data).reshape(-1)[::-1].copy(),
                                m.reshape(-1)[::-1].copy()))
        return out

    method.gpuemu_batch_outer = True
    builder.create_atomic_rmw = method


def undo() -> None:
    """Restores every address the group wrote, newest write first."""
    while _state.undo:
        entry = _state.undo.pop()
        if entry[0] == "bytes":
            _, lo, saved = entry
            _view(lo, saved.size, np.dtype(np.uint8))[:] = saved
        elif entry[0] == "index":
            _, lo, dtype, index, old = entry
            _view(lo, (int(index.max()) + 1) * dtype.itemsize, dtype)[index] = old
        else:
            _, ptrs, old, mask = entry
            _interp._interpreter.store(ptrs, old, mask)


def install(builder: type, interp: Any, state: Any) -> None:
    global _interp, _state
    _interp, _state = interp, state
    builder.create_masked_load = _load(builder.create_masked_load)
    builder.create_masked_store = _store(builder.create_masked_store)
    builder.create_atomic_rmw = _atomic_rmw(builder.create_atomic_rmw)
    builder.create_atomic_cas = _atomic_cas(builder.create_atomic_cas)
