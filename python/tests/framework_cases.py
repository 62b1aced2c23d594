# Shared by the test_frameworks_*.py files: the storage views a worker hands an adapter (every gpuemu
# dtype in every layout, 0-d, empty), every float16/bfloat16 bit pattern, and the CI rule for skips.
"""need(module): import a framework or skip (fail under CI=true); cases(): (dtype, layout, storage view);
OnlyDLPack(t): a tensor known only through the DLPack protocol."""

from __future__ import annotations

import importlib
import os

import numpy as np
import pytest

from gpuemu._internal.wire import tensors
from gpuemu._internal.core.dtypes import DTYPE_NAMES, storage_dtype, to_bf16_bits
from gpuemu._internal.core.layouts import with_layout
from gpuemu._internal.core.values import generate_tensor

LAYOUTS = ("contiguous", "transposed", "strided", "scalar", "empty")


def need(module: str):
    """The imported module; a skip when it is not installed, a failure under CI=true, where
    scripts/install-deps.sh installs every framework and no adapter may go untested."""
    if module == "tensorflow":
        _triton_first()
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        reason = f"{module} is not installed ({exc}); scripts/install-deps.sh installs it"
        if os.environ.get("CI") == "true":
            pytest.fail(reason + "; CI must test every adapter against the real framework")
        pytest.skip(reason)


def _triton_first() -> None:
    """Imports triton before tensorflow when it is installed: the other order aborts the process
    when triton is imported later (both bundle LLVM: "LLVM ERROR: inconsistency in registered
    CommandLine options"), and one pytest process may run the tensorflow and the triton tests."""
    try:
        importlib.import_module("triton")
    except ImportError:
        pass


def storage_of(values: np.ndarray, dtype: str) -> np.ndarray:
    """values (float64/int) stored as gpuemu storage: bfloat16 as uint16 bits, others in their dtype."""
    if dtype == "bfloat16":
        return to_bf16_bits(values)
    return np.asarray(values).astype(storage_dtype(dtype).newbyteorder("="))


def case_storage(dtype: str, layout: str, seed: int = 7) -> np.ndarray:
    """The storage view a worker decodes for a case: real strides (transposed, strided with gaps)."""
    shape = {"scalar": (), "empty": (0, 5)}.get(layout, (3, 5))
    if dtype == "bool":
        values = (np.arange(int(np.prod(shape))) % 3 == 0).reshape(shape)
    else:
        gen = "float32" if dtype == "bfloat16" else dtype
        values = generate_tensor(seed, gen, shape, (-100.0, 100.0) if "int" in dtype else (-4.0, 4.0), "regular")
    stored = storage_of(values, dtype)
    if layout in ("transposed", "strided"):
        stored = with_layout(stored, layout)
    # Through the same decoder as the worker: a view over one buffer with the case's strides.
    item = stored.itemsize
    steps = [s // item for s in stored.strides] if stored.ndim else []
    flat = np.lib.stride_tricks.as_strided(stored, (stored_extent(stored),), (item,)) if stored.size else stored
    buffer = bytearray(np.ascontiguousarray(flat).tobytes())
    return tensors.decode_storage(dtype, list(stored.shape), steps, buffer)


def stored_extent(arr: np.ndarray) -> int:
    return 1 + sum((d - 1) * (s // arr.itemsize) for d, s in zip(arr.shape, arr.strides))


def all_cases():
    return [(dtype, layout) for dtype in DTYPE_NAMES for layout in LAYOUTS]


def every_16bit_pattern(dtype: str) -> np.ndarray:
    """All 65536 bit patterns of float16 or bfloat16 (NaN payloads, -0, subnormals, Inf) as storage."""
    bits = np.arange(65536, dtype=np.uint16)
    return bits.view(np.float16) if dtype == "float16" else bits


def bits_of(arr: np.ndarray) -> np.ndarray:
    """The raw bytes of an array's logical elements in row-major order (for bit-exact comparison)."""
    a = np.ascontiguousarray(arr)
    return a.reshape(-1).view(np.uint8)


class OnlyDLPack:
    """A tensor known to gpuemu only through the DLPack protocol (`__dlpack__`, `__dlpack_device__`; no
    numpy type, no `__array__`)."""

    def __init__(self, t):
        self._t = t

    def __dlpack__(self, **kwargs):
        return self._t.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._t.__dlpack_device__()
