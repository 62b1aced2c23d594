# The pass rule (docs/configuration.md "[validation.tolerances]", the kinds of docs/result-json.md
# "failure") in numpy: the same kinds, precedence and statistics as src/check/compare.cpp.
"""compare_output(actual, expected, tolerance) -> Verdict, and compare_outputs for named outputs
(inline client-side validation)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

__all__ = ["Bounds", "Verdict", "compare_output", "compare_outputs", "named_outputs", "paired_outputs"]


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


def named_outputs(value) -> dict:
    """{name: array}: a dict of outputs as it is, one tensor as {"out": tensor} (the script protocol's name)."""
    if isinstance(value, dict):
        return dict(value)
    return {} if value is None else {"out": value}


def paired_outputs(actual: dict, expected: dict) -> dict:
    """actual with its outputs under the reference's names: when each side has exactly one output
    they are the same output whatever their names (an op's "out", the FAQ reference's "result"),
    as check::compare_outputs pairs them; otherwise unchanged (matched by name)."""
    if len(actual) == 1 and len(expected) == 1:
        return {next(iter(expected)): next(iter(actual.values()))}
    return actual


def compare_outputs(actual, expected, tolerance: Bounds, check_nan: bool = True,
                    check_inf: bool = True) -> Verdict:
    """Every reference output against the op's output of the same name (one each: paired whatever
    their names); extra outputs of the op are ignored; the worst kind wins, statistics span all."""
    ours, theirs = named_outputs(actual), named_outputs(expected)
    ours = paired_outputs(ours, theirs)
    verdicts = []
    for name, ref in theirs.items():
        if ours.get(name) is None:
            returned = ", ".join(f"'{n}'" for n in sorted(ours)) or "nothing"
            verdicts.append(Verdict("missing_output", f"the op's answer has no output '{name}' (it returned "
                                                      f"{returned}); return every output the reference returns, "
                                                      "under the same name"))
            continue
        verdicts.append(compare_output(ours[name], ref, tolerance, check_nan, check_inf, name=name))
    merged = Verdict()
    for v in verdicts:
        merged.max_abs = max(merged.max_abs, v.max_abs)
        merged.max_rel = max(merged.max_rel, v.max_rel)
        merged.tolerance_used = max(merged.tolerance_used, v.tolerance_used)
        merged.mismatches += v.mismatches
        merged.elements += v.elements
    failed = [v for v in verdicts if not v.passed]
    if failed:
        worst = min(failed, key=lambda v: _ORDER.index(v.kind) if v.kind in _ORDER else len(_ORDER))
        merged.kind, merged.message, merged.worst_index = worst.kind, worst.message, worst.worst_index
    return merged


def compare_output(actual, expected, tolerance: Bounds, check_nan: bool = True,
                   check_inf: bool = True, name: str = "out") -> Verdict:
    """Compare one op output with the reference output elementwise in float64."""
    if actual is None:
        return Verdict("missing_output", "the op returned nothing; return the output tensor")
    a = np.asarray(actual)
    e = np.asarray(expected)
    if a.shape != e.shape:
        return Verdict("shape_mismatch", f"output '{name}' has shape {list(a.shape)}, expected {list(e.shape)} "
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
        # The pass rule, check::within_tolerance (src/check/pass_rule.hpp), over whole arrays.
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
        return f"{name}{[int(v) for v in idx]}: got {float(x[i])!r}, expected {float(y[i])!r}"

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
