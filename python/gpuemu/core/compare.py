# The pass rule (docs/configuration.md "[validation.tolerances]", the kinds of docs/result-json.md
# "failure") in numpy: the same kinds, precedence and statistics as src/check/compare.cpp.
"""compare_output(actual, expected, tolerance) -> Verdict (inline client-side validation)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

__all__ = ["Bounds", "Verdict", "compare_output"]


class Bounds(Protocol):
    """What the pass rule reads from a tolerance (core/tolerance.py's ToleranceConfig has both)."""

    atol: float
    rtol: float


@dataclass
class Verdict:
    """What comparing one output concludes; kind "none" means passed."""

    kind: str = "none"
    message: str = ""
    max_abs: float = 0.0
    max_rel: float = 0.0
    mismatches: int = 0
    elements: int = 0
    tolerance_used: float = 0.0
    worst_index: tuple = ()

    @property
    def passed(self) -> bool:
        return self.kind == "none"


@dataclass
class _Found:
    problems: list = field(default_factory=list)

    def note(self, kind: str, message: str) -> None:
        self.problems.append((kind, message))


# Worst first, as check::compare_outputs.
_ORDER = ("missing_output", "shape_mismatch", "dtype_mismatch", "nonfinite_mismatch", "unexpected_nonfinite",
          "mismatch")  # fmt: skip


def _share(count: int, total: int) -> str:
    return f"{count} of {total} elements ({100.0 * count / total if total else 0.0:.3g}%)"


def compare_output(actual, expected, tolerance: Bounds, check_nan: bool = True,
                   check_inf: bool = True) -> Verdict:
    """Compare one op output with the reference output elementwise in float64."""
    if actual is None:
        return Verdict("missing_output", "the op returned nothing; return the output tensor")
    a = np.asarray(actual)
    e = np.asarray(expected)
    if a.shape != e.shape:
        return Verdict("shape_mismatch", f"output has shape {list(a.shape)}, expected {list(e.shape)} "
                                         "(the reference's shape)")
    x = a.astype(np.float64).reshape(-1)
    y = e.astype(np.float64).reshape(-1)
    found = _Found()
    ref_finite = np.isfinite(y)
    out_finite = np.isfinite(x)
    same_nonfinite = np.where(np.isnan(y), np.isnan(x), x == y)
    # check_nan / check_inf off relax only the agreement with the reference's NaN / Inf (those
    # elements are not compared); NaN/Inf where the reference is finite fails under every setting.
    agreement_checked = np.where(np.isnan(y), check_nan, check_inf)
    bad_nonfinite = ~ref_finite & ~same_nonfinite & agreement_checked
    unexpected = ref_finite & ~out_finite
    both = ref_finite & out_finite
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.where(both, np.abs(x - y), 0.0)
        ay = np.abs(y)
        bound = tolerance.atol + tolerance.rtol * ay
        ratio = np.where(d == 0, 0.0, np.where(bound > 0, d / bound, np.inf))
        rel = np.where(d == 0, 0.0, np.where(ay > 0, d / ay, np.inf))
    finite_fail = both & ~(d <= bound)
    verdict = Verdict(elements=int(x.size))
    if x.size:
        verdict.max_abs = float(d.max())
        verdict.max_rel = float(rel[both].max()) if both.any() else 0.0
        verdict.tolerance_used = float(ratio[both].max()) if both.any() else 0.0
    verdict.mismatches = int(bad_nonfinite.sum() + unexpected.sum() + finite_fail.sum())

    def where(i: int) -> str:
        idx = np.unravel_index(i, a.shape) if a.shape else ()
        return f"out{[int(v) for v in idx]}: got {float(x[i])!r}, expected {float(y[i])!r}"

    if bad_nonfinite.any():
        first = int(np.argmax(bad_nonfinite))
        found.note("nonfinite_mismatch", f"{_share(int(bad_nonfinite.sum()), x.size)} disagree with the reference "
                                         f"on NaN/Inf (the op must have NaN and Inf exactly where the reference "
                                         f"does); first {where(first)}")
    if unexpected.any():
        first = int(np.argmax(unexpected))
        found.note("unexpected_nonfinite", f"{_share(int(unexpected.sum()), x.size)} are NaN/Inf where the "
                                           f"reference is finite; first {where(first)}")
    if finite_fail.any():
        worst = int(np.argmax(np.where(finite_fail, ratio, -1.0)))
        verdict.worst_index = tuple(int(v) for v in np.unravel_index(worst, a.shape)) if a.shape else ()
        found.note("mismatch", f"{_share(int(finite_fail.sum()), x.size)} outside atol={tolerance.atol:g} + "
                               f"rtol={tolerance.rtol:g}*|ref|; worst {where(worst)} (abs {float(d[worst]):.3g}, "
                               f"rel {float(rel[worst]):.3g})")
    for kind in _ORDER:
        for k, message in found.problems:
            if k == kind:
                verdict.kind = kind
                verdict.message = message
                return verdict
    return verdict
