# Framework adapters (docs/frameworks.md): gpuemu's tensors as numpy, torch, jax or
# tensorflow tensors and back. Importing this package imports no framework; each is imported on use.
"""gpuemu.frameworks: one adapter module per framework, and the one conversion point (Converter).

    from gpuemu import frameworks
    conv = frameworks.Converter(frameworks.AdapterSettings(framework="pytorch"))
    x = frameworks.to_framework(np.ones((2, 3), np.float32), "pytorch")   # a torch tensor, no copy
    arr = frameworks.to_numpy(x)                                          # back, no copy

Each adapter module (numpy, pytorch, jax, tensorflow) has the same names: NAME, MODULE (what it
imports), EXTRA (the pip extra), DTYPES (gpuemu dtype -> framework dtype name), load(), version(),
select_device(), prepare(), to_framework(), is_tensor(), to_numpy(), calling().
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpuemu._internal.core.dtypes import DTYPE_NAMES
from gpuemu.errors import AdapterError, FrameworkNotInstalledError
from gpuemu.frameworks.convert import Converter, case_dtype
from gpuemu.frameworks._foreign import framework_of, to_numpy_any
from gpuemu.frameworks._registry import adapter
from gpuemu.frameworks._settings import DEVICES, FRAMEWORKS, NUMPY_BFLOAT16_FORMS, ROLES, AdapterSettings

__all__ = [
    "FRAMEWORKS",
    "DEVICES",
    "NUMPY_BFLOAT16_FORMS",
    "ROLES",
    "AdapterSettings",
    "AdapterError",
    "FrameworkNotInstalledError",
    "Converter",
    "adapter",
    "case_dtype",
    "framework_of",
    "to_framework",
    "to_numpy",
    "to_storage",
]


def to_storage(value: Any, what: str = "tensor") -> tuple[np.ndarray, str]:
    """(storage view, gpuemu dtype) of any supported tensor: bfloat16 as its uint16 bit patterns,
    the array's own strides kept. The inverse of to_framework."""
    arr = to_numpy_any(value, what)
    name = arr.dtype.name
    if name == "bfloat16":
        return arr.view(np.uint16), name
    return arr, canonical_name(arr, what)


def canonical_name(arr: np.ndarray, what: str) -> str:
    if arr.dtype.name not in DTYPE_NAMES:
        raise AdapterError(f"{what} has dtype {arr.dtype}, which gpuemu cannot store without a cast; use one of "
                           f"{', '.join(DTYPE_NAMES)}")
    return arr.dtype.name


def to_framework(value: Any, framework: str, *, dtype: str | None = None, device: str = "cpu",
                 numpy_bfloat16: str = "ml_dtypes") -> Any:
    """Any supported tensor (or a gpuemu storage array with dtype= its gpuemu dtype, e.g. uint16 bits
    with dtype="bfloat16") as a tensor of `framework`, without a copy where the framework allows."""
    if dtype is None:
        storage, dtype = to_storage(value)
    else:
        storage = np.asarray(value)
    settings = AdapterSettings(framework=framework, device=device, numpy_bfloat16=numpy_bfloat16)
    return Converter(settings).input(storage, dtype, "tensor")


def to_numpy(value: Any, what: str = "tensor") -> np.ndarray:
    """Any supported tensor as a numpy array (bfloat16 as ml_dtypes.bfloat16), a view where possible.
    `what` names the value in an AdapterError ("input 'x'")."""
    return to_numpy_any(value, what)
