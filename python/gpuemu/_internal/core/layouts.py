# Memory layouts in Python: the same logical values stored contiguous, transposed, row-padded or NHWC,
# with the strides tensor::with_layout (src/tensor) gives them, so a case replays byte for byte.
"""LAYOUTS, contiguous_strides and with_layout."""

from __future__ import annotations

import numpy as np

__all__ = ["LAYOUTS", "contiguous_strides", "with_layout"]

# The memory layouts gpuemu materialises (tensor::Layout order, whose numbers are persisted).
LAYOUTS = ("contiguous", "transposed", "strided", "channels_last")

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
    channels_last: dim 1 stored innermost, so a 4-D NCHW tensor has NHWC memory and torch's
    channels_last strides (torch.from_numpy of it is_contiguous(memory_format=torch.channels_last));
    rank 5 is channels_last_3d; below rank 3 there is no channel dim to move and it stays contiguous.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; use one of {', '.join(LAYOUTS)}")
    a = np.asarray(arr)
    if layout == "contiguous" or a.ndim == 0 or (layout == "transposed" and a.ndim < 2) or \
            (layout == "channels_last" and a.ndim < 3):
        return np.ascontiguousarray(a)
    # Strides are set explicitly (numpy would normalise those of size-1 dims) so they equal the C++ ones.
    strides = contiguous_strides(a.shape)
    if layout == "transposed":
        rows = a.shape[-2]
        flat = np.ascontiguousarray(np.swapaxes(a, -1, -2)).reshape(-1)
        strides[-2], strides[-1] = 1, rows
        return np.lib.stride_tricks.as_strided(flat, a.shape, [s * a.itemsize for s in strides])
    if layout == "channels_last":
        order = [0, *range(2, a.ndim), 1]  # memory order, outermost first
        step = 1
        for k in reversed(order):
            strides[k] = step
            step *= max(int(a.shape[k]), 1)
        flat = np.ascontiguousarray(np.transpose(a, order)).reshape(-1)
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
