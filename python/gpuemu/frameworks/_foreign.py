# Any tensor a user hands gpuemu (of any framework of FRAMEWORKS, or anything with __dlpack__) as a
# numpy array, found by the value's type without importing a framework the value does not come from.
"""to_numpy_any(value, what): the numpy array (bfloat16 as ml_dtypes.bfloat16) of any supported tensor."""

from __future__ import annotations

import functools
import importlib.util
from typing import Any

import numpy as np

from gpuemu._internal.core.dtypes import DTYPE_NAMES
from gpuemu.errors import AdapterError
from gpuemu.frameworks._registry import adapter
from gpuemu.frameworks._settings import FRAMEWORKS, check_choice

__all__ = ["framework_of", "to_numpy_any"]

# Top-level modules whose types are a framework's tensors besides the module its adapter imports
# (MODULE): jaxlib's arrays are JAX's, keras tensors TensorFlow's.
_ALSO_OWNED = {"jaxlib": "jax", "keras": "tensorflow"}


@functools.cache
def _owners() -> dict[str, str]:
    """Top-level module of a value's type -> the framework whose adapter reads it, from the adapters."""
    owners = {adapter(name).MODULE: name for name in FRAMEWORKS}
    for module, name in _ALSO_OWNED.items():
        check_choice(name, FRAMEWORKS, "framework")
        owners[module] = name
    return owners


def framework_of(value: Any) -> str | None:
    """The framework (a name of FRAMEWORKS) a value's type belongs to, else None."""
    if isinstance(value, (np.ndarray, np.generic)):
        return "numpy"
    for klass in type(value).__mro__:
        owner = _owners().get(klass.__module__.partition(".")[0])
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
