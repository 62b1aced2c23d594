"""A small numpy emulation of the parts of triton.language the example kernels use, so they
read like GPU tile kernels: pointers into flat storage, masked loads/stores, program ids, fp32 dot.

Why emulate pointers instead of slicing arrays: the bugs worth catching live in address
arithmetic and masks. An unmasked load past the end of a row really reads the next row (or
memory past the allocation) on a GPU; slicing a numpy array would silently clip and hide it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

float32 = np.float32

# What a load reads past the end of the allocation. A GPU returns whatever lives there (often
# another tensor or zeroed pool memory); zero is the emulation, and deliberately not -inf, so an
# unmasked tail behaves like the real bug instead of accidentally being the correct fill.
OUT_OF_ALLOCATION = 0.0

_program_ids: tuple[int, ...] = (0,)


@dataclass(frozen=True)
class Pointer:
    """A tensor of addresses (element offsets) into one flat storage buffer."""

    storage: np.ndarray
    offsets: np.ndarray | int

    def __add__(self, delta) -> "Pointer":
        return Pointer(self.storage, np.asarray(self.offsets) + np.asarray(delta))

    __radd__ = __add__


def pointer(arr: np.ndarray) -> tuple[Pointer, tuple[int, ...]]:
    """The base pointer of a (possibly strided or transposed) view, and its strides in elements.

    The storage is the memory the view spans, from its first element to its last, so gaps of a
    strided layout are addressable exactly as in the real buffer.
    """
    if arr.size == 0:
        return Pointer(np.zeros(0, arr.dtype), 0), tuple(0 for _ in arr.shape)
    itemsize = arr.itemsize
    if any(s < 0 or s % itemsize for s in arr.strides):
        raise ValueError("tile_emu: only non-negative, element-aligned strides are supported")
    strides = tuple(s // itemsize for s in arr.strides)
    span = 1 + sum((n - 1) * s for n, s in zip(arr.shape, strides))
    storage = np.lib.stride_tricks.as_strided(arr, shape=(span,), strides=(itemsize,))
    return Pointer(storage, 0), strides


def program_id(axis: int) -> int:
    return _program_ids[axis]


def launch(kernel, grid: tuple[int, ...], *args, **meta) -> None:
    """Runs kernel(*args, **meta) once per program id in the grid, like kernel[grid](...).

    Floating-point exceptions are silenced as on a GPU: rows that a mask drops may compute
    exp(-inf - -inf) = nan, which the masked store then never writes.
    """
    global _program_ids
    with np.errstate(all="ignore"):
        for pids in itertools.product(*(range(g) for g in grid)):
            _program_ids = pids
            kernel(*args, **meta)
    _program_ids = (0,)


def arange(start: int, end: int) -> np.ndarray:
    return np.arange(start, end, dtype=np.int64)


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def next_power_of_2(n: int) -> int:
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


def load(ptr: Pointer, mask: np.ndarray | None = None, other: float | None = None) -> np.ndarray:
    """Reads ptr's addresses. Lanes where mask is False get `other` and touch no memory; lanes
    that are enabled but fall outside the allocation read OUT_OF_ALLOCATION."""
    offsets = np.asarray(ptr.offsets)
    enabled = np.ones(offsets.shape, bool) if mask is None else np.broadcast_to(mask, offsets.shape)
    inside = (offsets >= 0) & (offsets < ptr.storage.size)
    safe = np.where(inside, offsets, 0)
    values = ptr.storage[safe] if ptr.storage.size else np.zeros(offsets.shape, ptr.storage.dtype)
    values = np.where(inside, values, ptr.storage.dtype.type(OUT_OF_ALLOCATION))
    fill = ptr.storage.dtype.type(0 if other is None else other)
    return np.where(enabled, values, fill).astype(ptr.storage.dtype, copy=False)


def store(ptr: Pointer, value: np.ndarray, mask: np.ndarray | None = None) -> None:
    """Writes value to ptr's addresses where mask is True. An enabled lane outside the
    allocation is an illegal memory access: it raises, as the CUDA launch would fail."""
    offsets = np.asarray(ptr.offsets)
    enabled = np.ones(offsets.shape, bool) if mask is None else np.broadcast_to(mask, offsets.shape)
    target = offsets[enabled]
    if target.size and (target.min() < 0 or target.max() >= ptr.storage.size):
        raise IndexError("tile_emu: illegal memory access in store (address outside the allocation)")
    ptr.storage[target] = np.broadcast_to(value, offsets.shape)[enabled].astype(ptr.storage.dtype)


def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """tl.dot: fp16/bf16/fp32 tiles multiplied with fp32 accumulation (IEEE, no TF32). Products
    of fp16 or bf16 values are exact in fp32, as in the tensor cores' fp32-accumulate mode."""
    return np.matmul(a.astype(np.float32), b.astype(np.float32))


def full(shape, value: float, dtype=np.float32) -> np.ndarray:
    return np.full(shape, value, dtype=dtype)


def zeros(shape, dtype=np.float32) -> np.ndarray:
    return np.zeros(shape, dtype=dtype)
