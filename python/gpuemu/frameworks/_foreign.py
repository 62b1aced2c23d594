# Any tensor a user hands gpuemu (numpy, torch, jax, tensorflow, or anything with __dlpack__) as a
# numpy array, found by the value's type without importing a framework the value does not come from.
"""to_numpy_any(value, what): the numpy array (bfloat16 as ml_dtypes.bfloat16) of any supported tensor."""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np

from gpuemu._internal.core.dtypes import DTYPE_NAMES, to_bf16_bits
from gpuemu.errors import AdapterError
from gpuemu.frameworks._registry import adapter

__all__ = ["framework_of", "to_numpy_any", "arrays_of", "case_storage"]

# Top-level module of a value's type -> the adapter that reads it.
_OWNERS = {"torch": "pytorch", "jax": "jax", "jaxlib": "jax", "tensorflow": "tensorflow", "keras": "tensorflow"}


def framework_of(value: Any) -> str | None:
    """The framework a value's type belongs to ("numpy", "pytorch", "jax", "tensorflow"), else None."""
    if isinstance(value, (np.ndarray, np.generic)):
        return "numpy"
    for klass in type(value).__mro__:
        owner = _OWNERS.get(klass.__module__.partition(".")[0])
        if owner is not None:
            return owner
    return None


def _from_dlpack_by_framework(value: Any) -> np.ndarray | None:
    """value read through torch's (else JAX's) DLPack import, for the dtypes numpy's lacks (bfloat16);
    None when neither is installed or neither can read it."""
    for framework, module in (("pytorch", "torch"), ("jax", "jax")):
        try:
            if importlib.util.find_spec(module) is None:
                continue
            lib = adapter(framework).load()
            tensor = lib.from_dlpack(value) if framework == "pytorch" else lib.dlpack.from_dlpack(value)
            return adapter(framework).to_numpy(tensor, None, "tensor")
        except Exception:  # noqa: BLE001  (this framework cannot read it either: try the next)
            continue
    return None


def _from_dlpack(value: Any, what: str) -> np.ndarray:
    try:
        arr = np.from_dlpack(value)
    except (BufferError, TypeError, ValueError, RuntimeError) as exc:
        # numpy's DLPack import has no bfloat16; torch's and JAX's do (a framework op may return one).
        arr = _from_dlpack_by_framework(value)
        if arr is not None and arr.dtype.name in DTYPE_NAMES:
            return arr
        raise AdapterError(f"{what} is a {type(value).__name__} whose DLPack export numpy cannot read ({exc}); "
                           "pass a CPU tensor of a gpuemu dtype, or a numpy array") from None
    if arr.dtype.name not in DTYPE_NAMES:
        raise AdapterError(f"{what} has dtype {arr.dtype} (read through DLPack), which gpuemu cannot store "
                           "without a cast")
    return arr


def to_numpy_any(value: Any, what: str, lenient: bool = True) -> np.ndarray:
    """The numpy array of a tensor of any supported framework, on any device with memory.

    lenient: also numbers and nested lists of numbers (np.asarray), as numpy callables always could
    return them. Otherwise a value that is no tensor at all is an AdapterError.
    """
    owner = framework_of(value)
    if owner is not None and owner != "numpy":
        return adapter(owner).to_numpy(value, None, what)
    if owner is None and hasattr(value, "__dlpack__"):
        return _from_dlpack(value, what)
    if owner is None and not lenient:
        raise AdapterError(f"{what} is a {type(value).__name__}, not a tensor; return a tensor")
    return adapter("numpy").to_numpy(value, None, what)


def arrays_of(value: Any, what: str) -> Any:
    """value with every tensor in it (one, or a dict of them) as a numpy array; None stays None."""
    if value is None:
        return None
    if isinstance(value, dict):
        return {name: (None if v is None else to_numpy_any(v, f"{what} {name!r}")) for name, v in value.items()}
    return to_numpy_any(value, what)


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
