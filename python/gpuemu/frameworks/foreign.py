# Any tensor a user hands gpuemu (numpy, torch, jax, tensorflow, or anything with __dlpack__) as a
# numpy array, found by the value's type without importing a framework the value does not come from.
"""to_numpy_any(value, what): the numpy array (bfloat16 as ml_dtypes.bfloat16) of any supported tensor."""

from __future__ import annotations

from typing import Any

import numpy as np

from gpuemu.dtypes import DTYPE_NAMES
from gpuemu.frameworks.errors import AdapterError

__all__ = ["framework_of", "to_numpy_any"]

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


def _from_dlpack(value: Any, what: str) -> np.ndarray:
    try:
        arr = np.from_dlpack(value)
    except (BufferError, TypeError, ValueError, RuntimeError) as exc:
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
    from gpuemu import frameworks

    owner = framework_of(value)
    if owner is not None and owner != "numpy":
        return frameworks.adapter(owner).to_numpy(value, None, what)
    if owner is None and hasattr(value, "__dlpack__"):
        return _from_dlpack(value, what)
    if owner is None and not lenient:
        raise AdapterError(f"{what} is a {type(value).__name__}, not a tensor; return a tensor")
    return frameworks.adapter("numpy").to_numpy(value, None, what)
