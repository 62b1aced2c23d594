# The numpy adapter: gpuemu's storage views are numpy already, so inputs pass through unchanged
# except bfloat16 (ml_dtypes bfloat16 views of the bits, or the older exact-float32 form).
"""gpuemu.frameworks.numpy: numpy arrays in and out (bfloat16 as ml_dtypes.bfloat16 or float32)."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import numpy as np

from gpuemu._internal.core.dtypes import DTYPE_NAMES, from_bf16_bits, is_ml_bfloat16, ml_bfloat16
from gpuemu.errors import AdapterError

__all__ = ["NAME", "MODULE", "EXTRA", "DTYPES", "load", "version", "select_device", "prepare", "to_framework",
           "is_tensor", "to_numpy", "calling"]

NAME = "numpy"
MODULE = "numpy"
EXTRA = "numpy"  # numpy is a dependency of gpuemu itself; no extra is needed
# gpuemu dtype -> numpy dtype name (bfloat16: ml_dtypes' bfloat16, or float32 in the older form).
DTYPES = {name: ("bfloat16" if name == "bfloat16" else name) for name in DTYPE_NAMES}


def load():
    return np


def version() -> str:
    return np.__version__


def select_device(device: str) -> str:
    """numpy runs on the CPU; asking for cuda is an error rather than a silent CPU run."""
    if device == "cuda":
        raise AdapterError("framework 'numpy' runs on the CPU only; use device 'auto' or 'cpu'")
    return "cpu"


def prepare(settings) -> None:
    if settings.numpy_bfloat16 == "ml_dtypes":
        ml_bfloat16()  # a missing ml_dtypes is an error now, not at the first bfloat16 case


def to_framework(storage: np.ndarray, dtype: str, settings) -> np.ndarray:
    """The array the callable gets: the storage view itself (same memory, same strides)."""
    if dtype != "bfloat16":
        return storage
    if settings.numpy_bfloat16 == "ml_dtypes":
        return storage.view(ml_bfloat16())  # same bits, same strides, no copy
    return from_bf16_bits(np.ascontiguousarray(storage))  # the older form: exact float32 values, a copy


def is_tensor(value: Any) -> bool:
    return isinstance(value, (np.ndarray, np.generic))


def to_numpy(value: Any, settings, what: str) -> np.ndarray:
    """A numeric numpy array for an output: arrays, numpy scalars, Python numbers and nested lists
    of numbers (as np.asarray reads them). Other ml_dtypes types (float8, int4) are refused."""
    if value is None:
        raise AdapterError(f"{what} is None; return the output tensor")
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise AdapterError(f"{what} is a {type(value).__name__}, not a numeric array ({exc})") from None
    if is_ml_bfloat16(arr.dtype):
        return arr
    if arr.dtype.kind in "OUSM" or arr.dtype.names:
        raise AdapterError(f"{what} is not a numeric array (got {type(value).__name__} of dtype {arr.dtype}); "
                           "return a numpy array of a gpuemu dtype")
    if arr.dtype.kind not in "biuf":
        raise AdapterError(f"{what} has dtype {arr.dtype}, which gpuemu cannot store without a cast; return one "
                           f"of {', '.join(DTYPE_NAMES)}")
    return arr


@contextlib.contextmanager
def calling(settings) -> Iterator[None]:
    yield
