# Element types as the wire and gpuemu.toml name them, their numpy storage, their limits, and
# exact round-to-nearest-even conversion to bfloat16 (numpy has no bfloat16). Mirrors src/tensor/.
"""gpuemu dtypes: names, aliases, numpy storage, limits and exact bfloat16 rounding."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "DTYPE_NAMES",
    "FloatInfo",
    "canonical_dtype",
    "float_info",
    "int_range",
    "is_floating",
    "itemsize",
    "storage_dtype",
    "to_bf16_bits",
    "from_bf16_bits",
    "round_to_dtype",
    "ml_bfloat16",
    "is_ml_bfloat16",
]

# Canonical names in the order of tensor::DType (whose numbers are persisted).
DTYPE_NAMES = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool")

# The aliases src/tensor/dtype.cpp accepts, so a name valid in gpuemu.toml is valid here too.
_ALIASES = {
    "f16": "float16", "fp16": "float16", "half": "float16", "bf16": "bfloat16",
    "f32": "float32", "fp32": "float32", "float": "float32", "single": "float32",
    "f64": "float64", "fp64": "float64", "double": "float64", "i8": "int8", "i16": "int16",
    "short": "int16", "i32": "int32", "int": "int32", "i64": "int64", "long": "int64",
    "u8": "uint8", "byte": "uint8", "bool_": "bool", "b8": "bool",
}  # fmt: skip

# Little-endian storage of one element on the wire; bfloat16 travels as its 16-bit pattern.
_STORAGE = {
    "float16": np.dtype("<f2"), "bfloat16": np.dtype("<u2"), "float32": np.dtype("<f4"),
    "float64": np.dtype("<f8"), "int8": np.dtype("i1"), "int16": np.dtype("<i2"),
    "int32": np.dtype("<i4"), "int64": np.dtype("<i8"), "uint8": np.dtype("u1"), "bool": np.dtype("?"),
}  # fmt: skip


@dataclass(frozen=True)
class FloatInfo:
    """Limits of a floating dtype, as float64 values (all exact)."""

    max_finite: float
    min_normal: float
    min_subnormal: float
    mantissa_bits: int  # stored fraction bits: 10, 7, 23, 52


_FLOAT_INFO = {
    "float16": FloatInfo(65504.0, 2.0**-14, 2.0**-24, 10),
    "bfloat16": FloatInfo((2.0 - 2.0**-7) * 2.0**127, 2.0**-126, 2.0**-133, 7),
    "float32": FloatInfo((2.0 - 2.0**-23) * 2.0**127, 2.0**-126, 2.0**-149, 23),
    "float64": FloatInfo(float(np.finfo(np.float64).max), 2.0**-1022, 2.0**-1074, 52),
}

_INT_RANGE = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint8": (0, 255),
    "bool": (0, 1),
}


def ml_bfloat16() -> np.dtype:
    """numpy's bfloat16 dtype from ml_dtypes (the one JAX and TensorFlow use).

    Imported here, on first use, so that code which never meets a bfloat16 array (and old
    installs without ml_dtypes) keeps working; a missing package is an error naming the fix.
    """
    try:
        # lazy: ml_dtypes (tens of milliseconds) is needed only once a bfloat16 array is made, and an
        # install without it still runs every float32 form of bfloat16.
        import ml_dtypes
    except ImportError:
        raise ImportError(
            "bfloat16 numpy arrays need the ml_dtypes package: pip install ml_dtypes (a dependency of "
            "gpuemu), or set [project] numpy_bfloat16 = \"float32\" in gpuemu.toml for float32 arrays"
        ) from None
    return np.dtype(ml_dtypes.bfloat16)


def is_ml_bfloat16(dtype) -> bool:
    """True for ml_dtypes' bfloat16 (checked by name: no import of ml_dtypes needed)."""
    return np.dtype(dtype).name == "bfloat16"


def canonical_dtype(name: str) -> str:
    """The canonical name for a dtype name or alias; ValueError naming the known ones otherwise."""
    if not isinstance(name, str):
        raise ValueError(f"dtype must be a string such as 'float32', got {name!r}")
    if name in _STORAGE:
        return name
    if name in _ALIASES:
        return _ALIASES[name]
    raise ValueError(f"unknown dtype {name!r}; use one of {', '.join(DTYPE_NAMES)}")


def storage_dtype(name: str) -> np.dtype:
    """The little-endian numpy dtype of one stored element (bfloat16: its uint16 bit pattern)."""
    return _STORAGE[canonical_dtype(name)]


def itemsize(name: str) -> int:
    return storage_dtype(name).itemsize


def is_floating(name: str) -> bool:
    return canonical_dtype(name) in _FLOAT_INFO


def float_info(name: str) -> FloatInfo:
    name = canonical_dtype(name)
    if name not in _FLOAT_INFO:
        raise ValueError(f"{name} is not a floating dtype")
    return _FLOAT_INFO[name]


def int_range(name: str) -> tuple[int, int]:
    name = canonical_dtype(name)
    if name not in _INT_RANGE:
        raise ValueError(f"{name} is not an integer or bool dtype")
    return _INT_RANGE[name]


# |x| at or above (2 - 2^-8) * 2^127 rounds to infinity in bfloat16 (the tie goes to the even Inf).
_BF16_OVERFLOW = (2.0 - 2.0**-8) * 2.0**127


def to_bf16_bits(arr) -> np.ndarray:
    """Round to nearest even to bfloat16, directly from the input's value, as uint16 bit patterns.

    float64 input is first rounded to float32 with round-to-odd (sticky low bit), which makes the
    second rounding to 8 significant bits exact (24 >= 8 + 2). NaN stays NaN (quiet, sign and top
    payload kept), overflow gives +-Inf.
    """
    a = np.asarray(arr)
    if is_ml_bfloat16(a.dtype):  # already bfloat16: its bits, exactly
        return a.view(np.uint16)
    if a.dtype == np.float64 or a.dtype.kind in "iub":
        x = a.astype(np.float64)
        finite_small = np.abs(x) < _BF16_OVERFLOW  # False for NaN and +-Inf too
        with np.errstate(over="ignore", invalid="ignore"):
            f = np.where(finite_small, x, 0.0).astype(np.float32)
        bits = f.view(np.uint32).copy()
        inexact = finite_small & (f.astype(np.float64) != x) & ((bits & np.uint32(1)) == 0)
        # Move one float32 step toward x: magnitude up if |x| > |f|, else down (sign-magnitude).
        away = np.abs(x) > np.abs(f.astype(np.float64))
        bits = np.where(inexact & away, bits + np.uint32(1), bits)
        bits = np.where(inexact & ~away, bits - np.uint32(1), bits)
        special = ~finite_small
        if special.any():
            sign = np.where(np.signbit(x), np.uint32(0x80000000), np.uint32(0))
            with np.errstate(over="ignore", invalid="ignore"):
                wide = x.astype(np.float32).view(np.uint32)  # keeps NaN payload top bits
            big = np.where(np.isnan(x), wide, sign | np.uint32(0x7F800000))
            bits = np.where(special, big, bits)
    elif a.dtype == np.float32:
        bits = a.view(np.uint32) if a.flags.c_contiguous else np.ascontiguousarray(a).view(np.uint32)
    elif a.dtype == np.float16:
        bits = a.astype(np.float32).view(np.uint32)
    else:
        raise ValueError(f"cannot round {a.dtype} values to bfloat16; pass a float or int array")
    bits = bits.astype(np.uint32)
    is_nan = (bits & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    bias = np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))
    rounded = ((bits + bias) >> np.uint32(16)).astype(np.uint16)
    quiet_nan = ((bits >> np.uint32(16)) | np.uint32(0x0040)).astype(np.uint16)
    return np.where(is_nan, quiet_nan, rounded).reshape(a.shape)


def from_bf16_bits(bits) -> np.ndarray:
    """bfloat16 bit patterns to float32, exactly (bfloat16 is the top half of a float32)."""
    b = np.asarray(bits)
    if is_ml_bfloat16(b.dtype):
        return b.astype(np.float32)
    if b.dtype != np.uint16:
        if b.dtype.kind not in "iu" or (b.size and (b.min() < 0 or b.max() > 0xFFFF)):
            raise ValueError("bfloat16 bit patterns must be uint16 values in [0, 65535]")
        b = b.astype(np.uint16)
    return (b.astype(np.uint32) << np.uint32(16)).view(np.float32)


def round_to_dtype(x: np.ndarray, name: str) -> np.ndarray:
    """float64 values rounded to nearest even in `name`, as the numpy array users see.

    bfloat16 gives float32 values that are exactly representable in bfloat16 (see numpy_dtype
    in gpuemu._internal.wire.tensors). float16 relies on numpy's float64->float16 cast, which rounds directly
    from double (python/tests/test_tensors.py checks it against an exact reference).
    """
    name = canonical_dtype(name)
    x = np.asarray(x, dtype=np.float64)
    if name == "float64":
        return x.copy()
    if name == "float32":
        return x.astype(np.float32)
    if name == "float16":
        return x.astype(np.float16)
    if name == "bfloat16":
        return from_bf16_bits(to_bf16_bits(x))
    raise ValueError(f"round_to_dtype needs a floating dtype, got {name}")
