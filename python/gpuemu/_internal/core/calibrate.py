# Fitting tolerances from measured errors in Python (calibrate_tolerance): the method of
# `gpuemu calibrate` (src/engine/calibrate.cpp, docs/configuration.md), on the user's own functions.
"""calibrate_tolerance(op_fn, ref_fn, shapes): atol and rtol from the 95th percentile of per-case error."""

from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from gpuemu._internal.core.dtypes import canonical_dtype
from gpuemu._internal.core.rng import derive_seed
from gpuemu._internal.core.tolerance import ToleranceConfig, unit_roundoff
from gpuemu._internal.core.values import generate_tensor

__all__ = ["calibrate_tolerance", "case_errors"]


def _p95(values: list[float]) -> float:
    """The value at rank ceil(0.95 n) of the sorted values, as src/engine/calibrate.cpp."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(math.ceil(0.95 * len(ordered)) - 1, len(ordered) - 1)]


def case_errors(out, ref) -> tuple[float, float]:
    """(max |out-ref| where |ref| < 1, max |out-ref|/|ref| where |ref| >= 1), finite elements only."""
    a = np.asarray(out, dtype=np.float64).reshape(-1)
    b = np.asarray(ref, dtype=np.float64).reshape(-1)
    n = min(a.size, b.size)
    a, b = a[:n], b[:n]
    finite = np.isfinite(a) & np.isfinite(b)
    diff = np.abs(a - b, where=finite, out=np.zeros(n))
    small = finite & (np.abs(b) < 1.0)
    large = finite & ~small
    abs_small = float(diff[small].max()) if small.any() else 0.0
    rel_large = float((diff[large] / np.abs(b[large])).max()) if large.any() else 0.0
    return abs_small, rel_large


def calibrate_tolerance(op_fn: Callable, ref_fn: Callable, shapes: Sequence[tuple[int, ...]],
                        dtype: str = "float32", n_samples: int = 100, seed: int = 0x6361_6C69_6272_6174) -> ToleranceConfig:
    """Fit atol and rtol as 1.5 x the 95th percentile of per-case error (the method of `gpuemu calibrate`).

    Each sample generates one input per shape (gpuemu's regular value distribution in [-1, 1], from
    derive_seed(seed, "calibrate/I")), calls op_fn(*inputs) and ref_fn(*inputs), and records the
    largest absolute error where |ref| < 1 and the largest relative error where |ref| >= 1. Both
    bounds are floored at the dtype's unit roundoff.
    """
    if not shapes:
        raise ValueError("calibrate_tolerance needs at least one input shape")
    if n_samples < 1:
        raise ValueError(f"n_samples must be >= 1, got {n_samples}")
    dtype = canonical_dtype(dtype)
    abs_errors: list[float] = []
    rel_errors: list[float] = []
    for i in range(n_samples):
        sample_seed = derive_seed(seed, f"calibrate/{i}")
        inputs = [
            generate_tensor(derive_seed(sample_seed, f"input/{k}"), dtype, tuple(shape), (-1.0, 1.0), "regular")
            for k, shape in enumerate(shapes)
        ]
        abs_small, rel_large = case_errors(op_fn(*inputs), ref_fn(*inputs))
        abs_errors.append(abs_small)
        rel_errors.append(rel_large)
    floor = unit_roundoff(dtype)
    return ToleranceConfig(max(1.5 * _p95(abs_errors), floor), max(1.5 * _p95(rel_errors), floor))
