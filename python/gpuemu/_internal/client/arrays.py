# What the client does with the tensors a user's run_op takes and returns: every one as a numpy
# array (through gpuemu.frameworks' public to_numpy), and a case input as the storage gpuemu sends.
"""arrays_of(value, what) and case_storage(arr, case_dtype, what)."""

from __future__ import annotations

from typing import Any

import numpy as np

from gpuemu._internal.core.dtypes import DTYPE_NAMES, to_bf16_bits
from gpuemu.errors import AdapterError
from gpuemu.frameworks import to_numpy

__all__ = ["arrays_of", "case_storage"]


def arrays_of(value: Any, what: str) -> Any:
    """value with every tensor in it (one, or a dict of them) as a numpy array; None stays None."""
    if value is None:
        return None
    if isinstance(value, dict):
        return {name: (None if v is None else to_numpy(v, f"{what} {name!r}")) for name, v in value.items()}
    return to_numpy(value, what)


def case_storage(arr: np.ndarray, case_dtype: str | None, what: str) -> tuple[np.ndarray, str]:
    """(storage view, gpuemu dtype) of a case input held by the client: ml_dtypes bfloat16 as its bits,
    and a float32 array of a bfloat16 case (the client's older form) as bfloat16 bits when every
    value is a bfloat16 value (a copy), so a framework op gets the case's real dtype."""
    if arr.dtype.name == "bfloat16":
        return arr.view(np.uint16), "bfloat16"
    if case_dtype in ("bfloat16", "bf16") and arr.dtype == np.float32:
        bits = to_bf16_bits(arr)
        if np.array_equal((bits.astype(np.uint32) << 16).view(np.float32), arr, equal_nan=True):
            return bits, "bfloat16"
    if arr.dtype.name not in DTYPE_NAMES:
        raise AdapterError(f"{what} has dtype {arr.dtype}, which gpuemu cannot store without a cast")
    return arr, arr.dtype.name
