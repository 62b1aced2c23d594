# The TensorFlow adapter: gpuemu storage views become eager tf tensors (bfloat16 as tf.bfloat16,
# the same ml_dtypes type), and outputs come back as numpy arrays of the same dtype.
"""gpuemu.frameworks.tensorflow: eager tf tensors in and out.

tensorflow is imported on first use (load()), not when this module is imported: importing it takes
seconds, and gpuemu must import (and say which extra to install) on machines without it.
TensorFlow tensors have no strides: a transposed or strided case reaches the callable as its values.
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
           "is_tensor", "to_numpy", "calling"]

NAME = "tensorflow"
MODULE = "tensorflow"
EXTRA = "tensorflow"
# gpuemu dtype -> tf dtype attribute: the names agree for every gpuemu dtype.
DTYPES = {name: name for name in DTYPE_NAMES}
_TF_DEVICE = {"cpu": "/CPU:0", "cuda": "/GPU:0"}


def load():
    # TensorFlow prints several lines of C++ start-up logging to stderr, which would land in the
    # first case's stderr tail; only its errors are kept (the user's own setting wins).
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return require(MODULE, NAME, EXTRA)


def version() -> str:
    return str(load().__version__)


def _has_gpu(tf) -> bool:
    return bool(tf.config.list_physical_devices("GPU"))


def select_device(device: str) -> str:
    tf = load()
    if device == "cuda" and not _has_gpu(tf):
        raise AdapterError("device 'cuda' was asked for, but TensorFlow sees no GPU; use device 'auto' to fall "
                           "back to the CPU")
    if device == "auto":
        return "cuda" if _has_gpu(tf) else "cpu"
    return device


def prepare(settings) -> None:
    tf = load()
    if not tf.executing_eagerly():
        raise AdapterError("TensorFlow is not executing eagerly (tf.compat.v1.disable_eager_execution() was "
                           "called); gpuemu passes eager tensors, so leave eager execution on")


def to_framework(storage: np.ndarray, dtype: str, settings) -> Any:
    """An eager tensor with the storage view's values on the callable's device (a copy: TensorFlow
    owns its buffers and has no strides)."""
    tf = load()
    arr = storage.view(ml_bfloat16()) if dtype == "bfloat16" else storage
    with tf.device(_TF_DEVICE[settings.device]):
        # order="C", not ascontiguousarray: that one turns a 0-d case into shape (1,).
        return tf.convert_to_tensor(np.asarray(arr, order="C"), dtype=getattr(tf, DTYPES[dtype]))


def is_tensor(value: Any) -> bool:
    tf = load()
    return isinstance(value, (tf.Tensor, tf.Variable))


def to_numpy(value: Any, settings, what: str) -> np.ndarray:
    tf = load()
    if isinstance(value, tf.Variable):
        value = value.read_value()
    if not isinstance(value, tf.Tensor):
        raise AdapterError(f"{what} is a {type(value).__name__}, not a tf.Tensor; return a tensor")
    if not hasattr(value, "numpy") or tf.is_symbolic_tensor(value):
        raise AdapterError(f"{what} is a symbolic graph tensor, not an eager one: the op returned a value from "
                           "inside tf.function tracing; return the result of calling the tf.function instead")
    if value.dtype.name not in DTYPES:
        raise AdapterError(f"{what} has dtype tf.{value.dtype.name}, which gpuemu cannot store without a cast; "
                           f"return one of tf.{', tf.'.join(DTYPES)}")
    place = "cuda" if ":GPU:" in value.device.upper() else "cpu"
    want = None if settings is None else settings.device
    if want is not None and place != want:
        raise AdapterError(f"{what} is on '{value.device}', but the op runs on '{want}'; return the output on "
                           "the device of its inputs")
    return np.asarray(value.numpy())


@contextlib.contextmanager
def calling(settings) -> Iterator[None]:
    tf = load()
    with tf.device(_TF_DEVICE[settings.device]):
        yield
