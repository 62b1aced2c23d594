# Tolerances on the Python side: the per-dtype defaults of src/check/tolerance.cpp, named
# profiles and recommendations by op type (calibration from measured errors is core/calibrate.py).
"""ToleranceConfig, ToleranceProfile, get_recommended_tolerance, DEFAULT_TOLERANCES."""

from __future__ import annotations

import math
from dataclasses import dataclass
from gpuemu._internal.core.compare import compare_output
from gpuemu._internal.core.dtypes import canonical_dtype

__all__ = [
    "ToleranceConfig",
    "ToleranceProfile",
    "get_recommended_tolerance",
    "unit_roundoff",
    "tolerance_from_tables",
    "DEFAULT_TOLERANCES",
]

# A mirror of check::default_tolerance (src/check/tolerance.cpp), the one source: unit_check's
# DefaultTolerances tests fail when a dtype or value here differs from it.
DEFAULT_TOLERANCES = {
    "float16": (1e-2, 1e-2),
    "bfloat16": (1e-2, 1e-2),
    "float32": (1e-5, 1e-5),
    "float64": (1e-10, 1e-10),
}

# Half the distance from 1 to the next value: the floor calibration never goes below.
_UNIT_ROUNDOFF = {"float16": 2.0**-11, "bfloat16": 2.0**-8, "float32": 2.0**-24, "float64": 2.0**-53}


def unit_roundoff(dtype: str) -> float:
    """2^-(mantissa bits + 1) for float dtypes, 0 for integers and bool (compared exactly)."""
    return _UNIT_ROUNDOFF.get(canonical_dtype(dtype), 0.0)


@dataclass(frozen=True)
class ToleranceConfig:
    """A case passes when every element has |out - ref| <= atol + rtol * |ref| (in float64)."""

    atol: float = 1e-5
    rtol: float = 1e-5

    def __post_init__(self):
        for name in ("atol", "rtol"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or math.isnan(value) or value < 0:
                raise ValueError(f"ToleranceConfig.{name} must be a number >= 0, got {value!r}")

    @classmethod
    def for_dtype(cls, dtype: str) -> "ToleranceConfig":
        """gpuemu's built-in default for the dtype (integers and bool: exact)."""
        atol, rtol = DEFAULT_TOLERANCES.get(canonical_dtype(dtype), (0.0, 0.0))
        return cls(atol, rtol)

    @classmethod
    def strict(cls) -> "ToleranceConfig":
        return cls(1e-7, 1e-7)

    @classmethod
    def relaxed(cls) -> "ToleranceConfig":
        return cls(1e-3, 1e-3)

    def scale(self, factor: float) -> "ToleranceConfig":
        """Both bounds multiplied by factor (> 0)."""
        if not factor > 0 or math.isinf(factor):
            raise ValueError(f"scale factor must be a finite number > 0, got {factor!r}")
        return ToleranceConfig(self.atol * factor, self.rtol * factor)

    def allows(self, actual, expected) -> bool:
        """True when actual passes against expected: gpuemu's pass rule, NaN/Inf exactly where expected has them."""
        return compare_output(actual, expected, self).passed

    def to_dict(self) -> dict:
        return {"atol": self.atol, "rtol": self.rtol}


def tolerance_from_tables(dtype: str, tables: list[dict]) -> ToleranceConfig:
    """The built-in default of the dtype, then each [...tolerances] table's entry for it (keys are
    dtype names or aliases) field by field, later tables winning, as the C++ config resolves them."""
    dtype = canonical_dtype(dtype)
    atol, rtol = DEFAULT_TOLERANCES.get(dtype, (0.0, 0.0))
    for table in tables:
        for key, entry in table.items():
            if canonical_dtype(key) == dtype:
                atol = float(entry.get("atol", atol))
                rtol = float(entry.get("rtol", rtol))
    return ToleranceConfig(atol, rtol)


class ToleranceProfile:
    """Named tolerances: "testing" (relaxed), "production" (strict), "cross_framework", "default"."""

    _NAMES = ("testing", "production", "cross_framework", "default", "strict", "relaxed")

    @staticmethod
    def get(name: str) -> ToleranceConfig:
        key = str(name).strip().lower().replace("-", "_")
        if key in ("testing", "relaxed"):
            return ToleranceProfile.for_testing()
        if key in ("production", "strict"):
            return ToleranceProfile.for_production()
        if key == "cross_framework":
            return ToleranceProfile.for_cross_framework()
        if key == "default":
            return ToleranceConfig.for_dtype("float32")
        raise ValueError(f"unknown tolerance profile {name!r}; use one of {', '.join(ToleranceProfile._NAMES)}")

    @staticmethod
    def for_testing() -> ToleranceConfig:
        return ToleranceConfig.relaxed()

    @staticmethod
    def for_production() -> ToleranceConfig:
        return ToleranceConfig.strict()

    @staticmethod
    def for_cross_framework() -> ToleranceConfig:
        # Two frameworks may reduce in different orders and fuse differently: float32 results
        # agree to a few hundred ulps on typical reduction lengths, hence 1e-4 / 1e-4.
        return ToleranceConfig(1e-4, 1e-4)


# Error of a length-K reduction grows like sqrt(K) * u_acc for random-sign data (the usual
# probabilistic bound), where kernels accumulate half types in float32; the output's own
# rounding adds u_out. The factor 4 leaves room for unlucky sign patterns.
_REDUCING_OPS = {"reduction", "matmul", "gemm", "conv", "attention", "softmax", "normalization", "layernorm", "sum"}
_DEFAULT_REDUCTION_LENGTH = 1024


def get_recommended_tolerance(dtype: str = "float32", op_type: str = "elementwise",
                              reduction_length: int | None = None) -> ToleranceConfig:
    """The dtype default, widened for ops that accumulate: 2 u_out + 4 sqrt(K) u_acc (float32 accumulators).

    op_type: "elementwise" (default) or one of reduction, matmul, gemm, conv, attention, softmax,
    normalization, layernorm, sum. reduction_length: the accumulated dim (default 1024).
    """
    base = ToleranceConfig.for_dtype(dtype)
    kind = str(op_type).strip().lower()
    if kind == "elementwise":
        return base
    if kind not in _REDUCING_OPS:
        raise ValueError(f"unknown op_type {op_type!r}; use elementwise or one of {', '.join(sorted(_REDUCING_OPS))}")
    length = _DEFAULT_REDUCTION_LENGTH if reduction_length is None else int(reduction_length)
    if length < 1:
        raise ValueError(f"reduction_length must be >= 1, got {reduction_length}")
    accumulator = "float64" if canonical_dtype(dtype) == "float64" else "float32"
    grown = 2.0 * unit_roundoff(dtype) + 4.0 * math.sqrt(length) * unit_roundoff(accumulator)
    return ToleranceConfig(max(base.atol, grown), max(base.rtol, grown))
