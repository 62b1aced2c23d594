# The seed FAQ's `from gpuemu.tolerances import calibrate_tolerance`: one name that takes both documented
# call forms, a client and an op (the daemon's calibrate) or two functions and shapes (fitted here).
"""calibrate_tolerance(client, "my_op", dtype=..., iterations=100) -> {"atol", "rtol"}, or
calibrate_tolerance(op_fn, ref_fn, shapes, dtype=..., n_samples=100) -> ToleranceConfig; plus the
tolerance classes of gpuemu._internal.core.tolerance (docs/python-api.md, "Tolerances")."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from gpuemu._internal.core.calibrate import calibrate_tolerance as _fit_functions
from gpuemu._internal.core.tolerance import ToleranceConfig, ToleranceProfile, get_recommended_tolerance
from gpuemu.errors import CalibrationError, ClientError

# The function form's default seed, as _fit_functions declares it.
_DEFAULT_FIT_SEED = inspect.signature(_fit_functions).parameters["seed"].default

__all__ = ["calibrate_tolerance", "ToleranceConfig", "ToleranceProfile", "get_recommended_tolerance"]


def calibrate_tolerance(op_fn: Any, ref_fn: Callable | str,
                        shapes: Sequence[tuple[int, ...]] | None = None, dtype: str | None = None,
                        n_samples: int = 100, seed: int | None = None, *, iterations: int = 100,
                        against: str | None = None) -> ToleranceConfig | dict[str, float]:
    """Two call forms, told apart by ``ref_fn``: an op name (str) or a function.

    - ``calibrate_tolerance(client, "my_op", dtype="float32", iterations=100)`` (faq.txt): the
      daemon runs the op's trusted implementation against its reference on ``iterations`` cases
      (``client.calibrate``, as ``gpuemu calibrate``) and the fitted bounds of ``dtype`` come back as
      ``{"atol": ..., "rtol": ...}``. ``dtype=None`` takes the op's first dtype; ``seed=`` and
      ``against=`` are passed on.
    - ``calibrate_tolerance(op_fn, ref_fn, shapes, dtype="float32", n_samples=100)``
      (python-api.txt): both functions run here on ``n_samples`` random inputs, a ToleranceConfig
      comes back. ``dtype=None`` is float32, ``seed=None`` gpuemu's fixed calibration seed.
    """
    if isinstance(ref_fn, str):
        # The parameters of the other form would be silently ignored: name the one to use instead.
        if shapes is not None or n_samples != 100:
            raise TypeError(f"calibrate_tolerance({op_fn!r}, {ref_fn!r}, ...): shapes and n_samples belong to the "
                            "function form (op_fn, ref_fn, shapes); with an op name, pass dtype= by keyword and count cases "
                            "with iterations=")
        return _calibrate_op(op_fn, ref_fn, dtype=dtype, iterations=iterations, seed=seed, against=against)
    if shapes is None or iterations != 100 or against is not None:
        raise TypeError("calibrate_tolerance(op_fn, ref_fn, shapes, dtype=..., n_samples=...): the function form "
                        "needs shapes (one input shape per argument) and counts samples with n_samples=; "
                        "iterations= and against= belong to the op form (client, \"op_name\")")
    fit_seed = _DEFAULT_FIT_SEED if seed is None else seed
    return _fit_functions(op_fn, ref_fn, shapes, dtype or "float32", n_samples, fit_seed)


def _calibrate_op(client: Any, op_name: str, dtype: str | None = None, iterations: int = 100,
                  seed: int | None = None, against: str | None = None) -> dict[str, float]:
    if not callable(getattr(client, "calibrate", None)):
        raise ClientError(f"calibrate_tolerance({client!r}, {op_name!r}, ...): the first argument must be a "
                          "gpuemu.Client when the second is an op name (or pass op_fn, ref_fn, shapes to fit "
                          "two functions here)")
    rows = client.calibrate(op_name, dtype=dtype, iterations=iterations, seed=seed, against=against)
    row = next((r for r in rows if dtype is None or r.get("dtype") == dtype), None)
    if row is None:
        found = ", ".join(str(r.get("dtype")) for r in rows) or "none"
        raise ClientError(f"calibrating '{op_name}' gave no {dtype} row (dtypes calibrated: {found}); "
                          "name one of the op's dtypes")
    fitted = row.get("fitted") or {}
    check = row.get("check") or {}
    if not check.get("passed", False):
        # As `gpuemu calibrate`, which exits 1: bounds that fail their own re-check would not hold in CI.
        worst = check.get("worst") or {}
        why = (f"they fail the trusted implementation on {check.get('failed', 0)} of {check.get('cases', 0)} fresh "
               f"cases; worst: seed {worst.get('seed')} ({worst.get('stratum')} values), {worst.get('kind')}: "
               f"{worst.get('message')}" if worst else
               f"no re-check case ran cleanly ({check.get('errors', 0)} errors)")
        raise CalibrationError(f"calibrating '{op_name}' ({row.get('dtype')}): the fitted tolerances (atol "
                               f"{float(fitted['atol']):.3g}, rtol {float(fitted['rtol']):.3g}) did not pass the "
                               f"re-check: {why}; raise iterations so the fit sees more cases, or set the "
                               "tolerances by hand", row)
    return {"atol": float(fitted["atol"]), "rtol": float(fitted["rtol"])}
