# The tensor codec every Python part of gpuemu uses (script helpers, warm worker, client): the
# script-protocol JSON form and raw binary-frame buffers <-> numpy arrays (docs/rng.md, "Storage").
"""Encode and decode tensors: {"shape", "strides", "dtype", "data"} and raw little-endian buffers.

Strides are in elements. A decoded tensor is a numpy view over the storage buffer with exactly
those strides (so a strided or transposed layout reaches the script as that layout). bfloat16:
decode_storage gives its 16-bit patterns (uint16, still a view), which gpuemu.frameworks turns
into each framework's bfloat16; decode_raw gives exact float32 (today's numpy form). Encoding
accepts ml_dtypes bfloat16 arrays and stores their bits unchanged.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import numpy as np

from gpuemu._internal.core.dtypes import canonical_dtype, from_bf16_bits, is_ml_bfloat16, storage_dtype, to_bf16_bits
from gpuemu._internal.core.layouts import contiguous_strides

__all__ = [
    "numpy_dtype",
    "decode_tensor",
    "decode_raw",
    "decode_storage",
    "decode_tensor_storage",
    "decode_tensor_buffer",
    "encode_tensor",
    "encode_raw",
    "encode_view",
    "to_bf16_bits",
    "from_bf16_bits",
    "contiguous_strides",
]


def numpy_dtype(name: str) -> np.dtype:
    """The numpy dtype users see for a gpuemu dtype; bfloat16 maps to float32 (exact values)."""
    name = canonical_dtype(name)
    if name == "bfloat16":
        return np.dtype(np.float32)
    return storage_dtype(name).newbyteorder("=")


def _as_int_list(value: Any, what: str) -> list[int]:
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"tensor {what} must be a list of integers, got {type(value).__name__}")
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise ValueError(f"tensor {what} must hold integers, got {v!r}")
        out.append(int(v))
    return out


def decode_raw(dtype: str, shape, strides, buffer) -> np.ndarray:
    """A numpy view with the given shape and element strides over a little-endian storage buffer.

    strides None means contiguous row-major. The view is writable exactly when the buffer is.
    bfloat16 decodes to a new float32 array holding the exact values.
    Raises ValueError as decode_storage does.
    """
    name = canonical_dtype(dtype)
    out = decode_storage(name, shape, strides, buffer)
    if name == "bfloat16":
        return from_bf16_bits(np.ascontiguousarray(out))
    return out


def decode_storage(dtype: str, shape, strides, buffer) -> np.ndarray:
    """decode_raw without any conversion: bfloat16 stays its uint16 bit patterns, as a view.

    strides None means contiguous row-major. The view is writable exactly when the buffer is.
    Raises ValueError naming the problem for unknown dtypes, negative sizes or strides, buffers
    that are not a whole number of elements, and views that reach past the buffer's end.
    """
    name = canonical_dtype(dtype)
    dims = _as_int_list(shape, "shape")
    if any(d < 0 for d in dims):
        raise ValueError(f"tensor shape {dims} has a negative dimension")
    steps = contiguous_strides(dims) if strides is None else _as_int_list(strides, "strides")
    if len(steps) != len(dims):
        raise ValueError(f"tensor strides {steps} do not match the rank of shape {dims}")
    if any(s < 0 for s in steps):
        raise ValueError(f"tensor strides {steps} are negative; gpuemu layouts use strides >= 0")
    store = storage_dtype(name)
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError(f"tensor data must be bytes-like, got {type(buffer).__name__}") from None
    nbytes = view.nbytes
    if nbytes % store.itemsize != 0:
        raise ValueError(
            f"tensor data has {nbytes} bytes, not a whole number of {name} elements ({store.itemsize} bytes each)"
        )
    count = nbytes // store.itemsize
    numel = 1
    for d in dims:
        numel *= d
    if numel > 0:
        last = sum((d - 1) * s for d, s in zip(dims, steps))
        if last >= count:
            raise ValueError(
                f"tensor view with shape {dims} and strides {steps} reaches element {last}, "
                f"but the data holds only {count} {name} elements"
            )
    flat = np.frombuffer(view.cast("B"), dtype=store, count=count) if count else np.zeros(0, store)
    if name == "bool" and count and flat.view(np.uint8).max() > 1:
        raise ValueError("bool tensor data must hold only bytes 0 and 1")
    if numel == 0:
        out = np.zeros(dims, dtype=store)
    else:
        out = np.lib.stride_tricks.as_strided(
            flat, shape=dims, strides=[s * store.itemsize for s in steps], writeable=not view.readonly
        )
    if not store.isnative:  # only on big-endian hosts
        return out.astype(store.newbyteorder("="))
    return out


def _tensor_bytes(obj: dict) -> bytearray:
    if not isinstance(obj, dict):
        raise ValueError(f"a tensor must be a JSON object with shape, dtype and data, got {type(obj).__name__}")
    missing = [key for key in ("shape", "dtype", "data") if key not in obj]
    if missing:
        raise ValueError(f"tensor object is missing {', '.join(missing)}; it needs shape, dtype and data")
    data = obj["data"]
    if not isinstance(data, str):
        raise ValueError("tensor data must be a base64 string")
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as err:
        raise ValueError(f"tensor data is not valid base64: {err}") from None
    return bytearray(raw)


def decode_tensor(obj: dict) -> np.ndarray:
    """Decode the script-protocol form {"shape", "strides"?, "dtype", "data": base64}."""
    raw = _tensor_bytes(obj)  # first: it explains a malformed object
    return decode_raw(obj["dtype"], obj["shape"], obj.get("strides"), raw)


def decode_tensor_storage(obj: dict) -> tuple[np.ndarray, str]:
    """(storage view, canonical dtype) of the script-protocol form, as decode_storage gives it."""
    return decode_tensor_buffer(obj)[:2]


def decode_tensor_buffer(obj: dict) -> tuple[np.ndarray, str, bytearray]:
    """decode_tensor_storage and the decoded storage bytes the view lies in."""
    raw = _tensor_bytes(obj)
    return decode_storage(obj["dtype"], obj["shape"], obj.get("strides"), raw), canonical_dtype(obj["dtype"]), raw


def _storage_bytes(arr, dtype: str | None) -> tuple[str, np.ndarray]:
    a = np.asarray(arr)
    if is_ml_bfloat16(a.dtype):  # ml_dtypes bfloat16: its bits go as they are (or cast on request)
        name = "bfloat16" if dtype is None else canonical_dtype(dtype)
        stored = to_bf16_bits(a) if name == "bfloat16" else a.astype(storage_dtype(name))
        return name, np.asarray(stored, order="C")
    if dtype is None:
        if a.dtype == np.bool_:
            name = "bool"
        else:
            try:
                name = canonical_dtype(a.dtype.name)
            except ValueError:
                raise ValueError(
                    f"cannot encode a {a.dtype} array; cast it to one of the gpuemu dtypes or pass dtype="
                ) from None
    else:
        name = canonical_dtype(dtype)
    if a.dtype.kind not in "biuf":
        raise ValueError(f"cannot encode a {a.dtype} array as {name}; only bool, int and float arrays")
    if name == "bfloat16":
        stored = to_bf16_bits(a)
    else:
        stored = a.astype(storage_dtype(name), copy=False)
    return name, np.asarray(stored, order="C")  # not ascontiguousarray: it turns 0-d into 1-d


def encode_raw(arr, dtype: str | None = None) -> tuple[dict, bytes]:
    """({"shape", "strides", "dtype"}, contiguous row-major little-endian bytes)."""
    name, stored = _storage_bytes(arr, dtype)
    shape = [int(d) for d in stored.shape]
    header = {"shape": shape, "strides": contiguous_strides(shape), "dtype": name}
    return header, stored.tobytes()


def encode_view(arr, dtype: str | None = None) -> tuple[dict, memoryview]:
    """encode_raw without the final copy: the bytes as a read-only memoryview of the (contiguous,
    converted when needed) array, for callers that copy them once into a larger buffer."""
    name, stored = _storage_bytes(arr, dtype)
    shape = [int(d) for d in stored.shape]
    header = {"shape": shape, "strides": contiguous_strides(shape), "dtype": name}
    # reshape(-1) of a C-ordered array is a view; uint8 views of it work for empty and 0-d arrays too.
    flat = stored.reshape(-1).view(np.uint8)
    view = memoryview(flat)
    return header, view.toreadonly()


def encode_tensor(arr, dtype: str | None = None) -> dict:
    """The script-protocol form of arr: contiguous row-major data, base64 little-endian.

    dtype None keeps the array's own dtype; "bfloat16" rounds to nearest even from the values;
    any other dtype casts with numpy's astype (correctly rounded for floats).
    """
    header, raw = encode_raw(arr, dtype)
    header["data"] = base64.b64encode(raw).decode("ascii")
    return header
