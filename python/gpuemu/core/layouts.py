# Memory layouts in Python: the same logical values stored contiguous, transposed or row-padded,
# with the strides tensor::with_layout (src/tensor) gives them, so a case replays byte for byte.
"""LAYOUTS, contiguous_strides and with_layout."""

from __future__ import annotations

import numpy as np

__all__ = ["LAYOUTS", "contiguous_strides", "with_layout"]

# The memory layouts gpuemu materialises (tensor::Layout order, whose numbers are persisted).
LAYOUTS = ("contiguous", "transposed", "strided")

# Elements of padding after every row of a strided layout (tensor::with_layout's default pad).
_ROW_PAD = 3


def contiguous_strides(shape) -> list[int]:
    """Row-major strides in elements."""
    strides = []
    step = 1
    for dim in reversed(list(shape)):
        strides.append(step)
        step *= max(int(dim), 1)
    return strides[::-1]


def with_layout(arr: np.ndarray, layout: str) -> np.ndarray:
    """The same logical values stored in the given layout (a real strided view, like tensor::with_layout).

    transposed: the last two dims stored column-major. strided: every row padded by three elements
    (rank 1: every other slot), as the C++ side; the padding holds NaN (floats) or the dtype's maximum.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; use one of {', '.join(LAYOUTS)}")
    a = np.asarray(arr)
    if layout == "contiguous" or a.ndim == 0 or (layout == "transposed" and a.ndim < 2):
        return np.ascontiguousarray(a)
    # Strides are set explicitly (numpy would normalise those of size-1 dims) so they equal the C++ ones.
    strides = contiguous_strides(a.shape)
    if layout == "transposed":
        rows = a.shape[-2]
        flat = np.ascontiguousarray(np.swapaxes(a, -1, -2)).reshape(-1)
        strides[-2], strides[-1] = 1, rows
        return np.lib.stride_tricks.as_strided(flat, a.shape, [s * a.itemsize for s in strides])
    poison = np.nan if a.dtype.kind == "f" else (True if a.dtype.kind == "b" else np.iinfo(a.dtype).max)
    if a.ndim == 1:
        buf = np.full(2 * a.shape[0], poison, dtype=a.dtype)
        buf[::2] = a
        return np.lib.stride_tricks.as_strided(buf, a.shape, (2 * a.itemsize,))
    cols = a.shape[-1]
    buf = np.full(a.shape[:-1] + (cols + _ROW_PAD,), poison, dtype=a.dtype)
    buf[..., :cols] = a
    step = cols + _ROW_PAD
    for k in range(a.ndim - 2, -1, -1):
        strides[k] = step
        step *= a.shape[k]
    return np.lib.stride_tricks.as_strided(buf.reshape(-1), a.shape, [s * a.itemsize for s in strides])
