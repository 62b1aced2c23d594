# The JAX adapter: gpuemu storage views become jax arrays (bfloat16 as jnp.bfloat16, the same
# ml_dtypes type), and outputs come back after block_until_ready as numpy arrays.
"""gpuemu.frameworks.jax: jax arrays in and out; interpret() tells a Pallas kernel how to run.

jax is imported on first use (load()), not when this module is imported: importing it takes about
a second, and gpuemu must import (and say which extra to install) on machines without it.
JAX arrays have no strides: a transposed or strided case reaches the callable as its values.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Iterator

import numpy as np

from gpuemu._internal.core.dtypes import DTYPE_NAMES, ml_bfloat16
from gpuemu.errors import AdapterError
from gpuemu.frameworks._requirement import require

__all__ = ["NAME", "MODULE", "EXTRA", "DTYPES", "load", "version", "select_device", "prepare", "to_framework",
           "is_tensor", "to_numpy", "calling", "interpret"]

NAME = "jax"
MODULE = "jax"
EXTRA = "jax"
# gpuemu dtype -> jnp dtype attribute (jnp.bool_ for bool).
DTYPES = {name: ("bool_" if name == "bool" else name) for name in DTYPE_NAMES}
_WIDE = ("float64", "int64")
# JAX's platform names for gpuemu's devices.
_PLATFORM = {"cpu": "cpu", "cuda": "gpu"}


def load():
    return require(MODULE, NAME, EXTRA)


def version() -> str:
    return str(load().__version__)


def _has_gpu(jax) -> bool:
    try:
        return bool(jax.devices("gpu"))
    except RuntimeError:  # no GPU backend in this jaxlib, or no device
        return False


def select_device(device: str) -> str:
    jax = load()
    if device == "cuda" and not _has_gpu(jax):
        raise AdapterError("device 'cuda' was asked for, but JAX sees no GPU (jax.devices('gpu') fails); use "
                           "device 'auto' to fall back to the CPU")
    if device == "auto":
        return "cuda" if _has_gpu(jax) else "cpu"
    return device


def prepare(settings) -> None:
    """A reference computes in float64, which JAX only has with jax_enable_x64: turned on for a
    reference's worker, before any case. An op keeps the user's setting (it changes JAX's default
    dtypes, which a kernel may rely on)."""
    jax = load()
    if settings.role == "reference":
        jax.config.update("jax_enable_x64", True)


def interpret() -> bool:
    """The value a Pallas kernel should pass as pallas_call(..., interpret=...).

    GPUEMU_PALLAS_INTERPRET ("1" or "0"), which gpuemu sets per worker from the op's
    `pallas_interpret`, decides when set; else TRITON_INTERPRET (one switch for both
    interpreters); else interpret exactly when JAX sees no GPU.
    """
    for name in ("GPUEMU_PALLAS_INTERPRET", "TRITON_INTERPRET"):
        flag = os.environ.get(name, "").strip()
        if flag:
            return flag not in ("0", "false", "False")
    return not _has_gpu(load())


def _x64(jax) -> bool:
    return bool(jax.config.read("jax_enable_x64"))


def to_framework(storage: np.ndarray, dtype: str, settings) -> Any:
    """A jax array with the storage view's values on the callable's device (JAX copies a strided
    view into its own contiguous buffer; a contiguous one it may use in place)."""
    jax = load()
    if dtype in _WIDE and not _x64(jax):
        raise AdapterError(f"JAX would silently turn {dtype} into {dtype.replace('64', '32')} because "
                           "jax_enable_x64 is off; call jax.config.update('jax_enable_x64', True) where your op "
                           "module is imported")
    arr = storage.view(ml_bfloat16()) if dtype == "bfloat16" else storage
    device = jax.devices(_PLATFORM[settings.device])[0]
    return jax.device_put(arr, device)


def _is_tracer(jax, value: Any) -> bool:
    tracer = getattr(getattr(jax, "core", None), "Tracer", None)
    if tracer is not None and isinstance(value, tracer):
        return True
    return type(value).__name__.endswith("Tracer")


def is_tensor(value: Any) -> bool:
    return isinstance(value, load().Array)


def to_numpy(value: Any, settings, what: str) -> np.ndarray:
    """The values of a concrete jax array as numpy (block_until_ready first); bfloat16 stays bfloat16."""
    jax = load()
    if _is_tracer(jax, value):
        raise AdapterError(f"{what} is a JAX tracer ({type(value).__name__}), not a concrete array: the op "
                           "returned a value from inside jax.jit/grad/vmap tracing; return the result of calling "
                           "the jitted function instead")
    if not isinstance(value, jax.Array):
        raise AdapterError(f"{what} is a {type(value).__name__}, not a jax.Array; return a jax array")
    value.block_until_ready()
    platforms = {d.platform for d in value.devices()}
    want = None if settings is None else _PLATFORM[settings.device]
    if want is not None and platforms != {want}:
        raise AdapterError(f"{what} is on {', '.join(sorted(platforms))}, but the op runs on {want}; return the "
                           "output on the device of its inputs")
    arr = np.asarray(value)
    if arr.dtype.name not in DTYPE_NAMES:
        raise AdapterError(f"{what} has dtype {arr.dtype}, which gpuemu cannot store without a cast; return "
                           f"one of jnp.{', jnp.'.join(DTYPES.values())}")
    return arr


@contextlib.contextmanager
def calling(settings) -> Iterator[None]:
    yield  # JAX dispatches asynchronously: to_numpy blocks on each output
