# Tests of the Python tolerance helpers: defaults equal the C++ ones (read from the source so a
# change on one side fails here), profiles, recommendations, calibration and the pass rule.
import inspect
import re

import numpy as np
from pathlib import Path

import pytest

from gpuemu import ToleranceConfig, ToleranceProfile, calibrate_tolerance, get_recommended_tolerance
from gpuemu.errors import CalibrationError
from gpuemu._internal.core.compare import compare_output

REPO_ROOT = Path(__file__).resolve().parents[2]


def cpp_defaults():
    """dtype -> (atol, rtol) parsed from src/check/tolerance.cpp's switch."""
    text = (REPO_ROOT / "src" / "check" / "tolerance.cpp").read_text()
    out = {}
    for cases, atol, rtol in re.findall(r"((?:case DType::\w+:\s*)+)return \{([\d.e-]+), ([\d.e-]+)\};", text):
        for name in re.findall(r"DType::(\w+)", cases):
            out[name] = (float(atol), float(rtol))
    return out


def test_for_dtype_matches_the_cpp_defaults():
    defaults = cpp_defaults()
    assert set(defaults) == {"float16", "bfloat16", "float32", "float64"}
    for dtype, (atol, rtol) in defaults.items():
        assert ToleranceConfig.for_dtype(dtype) == ToleranceConfig(atol, rtol)
    assert ToleranceConfig.for_dtype("int32") == ToleranceConfig(0.0, 0.0)
    assert ToleranceConfig.for_dtype("bf16") == ToleranceConfig.for_dtype("bfloat16")
    with pytest.raises(ValueError, match="unknown dtype"):
        ToleranceConfig.for_dtype("flaot16")


def test_strict_relaxed_scale_and_profiles():
    assert ToleranceConfig.strict() == ToleranceConfig(1e-7, 1e-7)
    assert ToleranceConfig.relaxed() == ToleranceConfig(1e-3, 1e-3)
    assert ToleranceConfig(1e-5, 2e-5).scale(10) == ToleranceConfig(1e-4, 2e-4)
    with pytest.raises(ValueError):
        ToleranceConfig(1e-5, 1e-5).scale(0)
    with pytest.raises(ValueError, match="atol must be a number >= 0"):
        ToleranceConfig(-1.0, 0.0)
    assert ToleranceProfile.for_testing() == ToleranceConfig.relaxed()
    assert ToleranceProfile.for_production() == ToleranceConfig.strict()
    assert ToleranceProfile.get("cross-framework") == ToleranceProfile.for_cross_framework()
    with pytest.raises(ValueError, match="unknown tolerance profile"):
        ToleranceProfile.get("lenient")


def test_allows_is_the_pass_rule_including_nonfinite():
    tol = ToleranceConfig(1e-3, 1e-2)
    ref = np.array([0.0, 100.0, np.nan, np.inf, -np.inf])
    assert tol.allows(ref + np.array([1e-3, 1.0, 0, 0, 0]), ref)
    assert not tol.allows(ref + np.array([2e-3, 0, 0, 0, 0]), ref)
    assert not tol.allows(np.array([0.0, 100.0, 1.0, np.inf, -np.inf]), ref)
    assert not tol.allows(np.array([0.0, 100.0, np.nan, -np.inf, -np.inf]), ref)


def test_recommended_tolerance_widens_for_reductions():
    assert get_recommended_tolerance("float32") == ToleranceConfig.for_dtype("float32")
    long = get_recommended_tolerance("float32", "matmul", reduction_length=1 << 20)
    assert long.rtol > get_recommended_tolerance("float32", "matmul", reduction_length=16).rtol
    assert get_recommended_tolerance("float16", "softmax").atol >= 1e-2
    with pytest.raises(ValueError, match="unknown op_type"):
        get_recommended_tolerance("float32", "teleport")


def test_calibrate_tolerance_fits_the_error_of_a_float32_matmul():
    def op(a, b):
        return a.astype(np.float32) @ b.astype(np.float32)

    def ref(a, b):
        return a.astype(np.float64) @ b.astype(np.float64)

    fitted = calibrate_tolerance(op, ref, [(8, 64), (64, 8)], "float32", n_samples=30)
    assert 2.0**-24 <= fitted.atol < 1e-4
    assert fitted.rtol < 1e-4
    exact = calibrate_tolerance(ref, ref, [(4, 4), (4, 4)], "float64", n_samples=5)
    assert exact == ToleranceConfig(2.0**-53, 2.0**-53)  # floored at the unit roundoff


def test_python_api_calibrate_form_through_gpuemu_tolerances():
    # python-api.txt's signature, keywords as written there, from the FAQ's module (issue 31, item 8).
    from gpuemu.tolerances import calibrate_tolerance as faq_module_form  # noqa: PLC0415  (the FAQ's import)

    def op_fn(a):
        return np.exp(a.astype(np.float32))

    def ref_fn(a):
        return np.exp(a.astype(np.float64))

    fitted = faq_module_form(op_fn=op_fn, ref_fn=ref_fn, shapes=[(16, 16)], dtype="float32", n_samples=10)
    assert isinstance(fitted, ToleranceConfig) and fitted == calibrate_tolerance(op_fn, ref_fn, [(16, 16)], "float32", 10)
    assert fitted.rtol < 1e-5


def test_compare_output_kinds_in_cpp_order():
    tol = ToleranceConfig(1e-5, 1e-5)
    ref = np.array([[1.0, 2.0], [np.nan, 4.0]])
    assert compare_output(ref.copy(), ref, tol).passed
    assert compare_output(np.zeros((3,)), ref, tol).kind == "shape_mismatch"
    assert compare_output(None, ref, tol).kind == "missing_output"
    both = np.array([[1.5, 2.0], [1.0, np.inf]])
    v = compare_output(both, ref, tol)
    assert v.kind == "nonfinite_mismatch" and v.mismatches == 3
    wrong = np.array([[1.0, 2.5], [np.nan, 4.0]])
    v = compare_output(wrong, ref, tol)
    assert v.kind == "mismatch" and v.worst_index == (0, 1) and v.max_abs == pytest.approx(0.5)
    assert "1 of 4 elements" in v.message and "out[0, 1]: got 2.5, expected 2.0" in v.message
    inf_out = np.array([[1.0, np.inf], [np.nan, 4.0]])
    assert compare_output(inf_out, ref, tol).kind == "unexpected_nonfinite"
    # check_nan/check_inf off relax only agreement with the reference's NaN/Inf: an Inf or NaN
    # output where the reference is finite fails under every setting (as in C++).
    assert compare_output(inf_out, ref, tol, check_inf=False).kind == "unexpected_nonfinite"
    all_nan = np.full((2, 2), np.nan)
    assert compare_output(all_nan, ref, tol, check_nan=False, check_inf=False).kind == "unexpected_nonfinite"
    relaxed = np.array([[1.0, 2.0], [7.0, 4.0]])  # the reference's NaN not matched
    assert compare_output(relaxed, ref, tol, check_nan=False).passed
    assert compare_output(relaxed, ref, tol).kind == "nonfinite_mismatch"


class _CalibratingClient:
    """Stands in for gpuemu.Client: answers calibrate with the given row, as the daemon does."""

    def __init__(self, row):
        self.row = row

    def calibrate(self, op_name, dtype=None, iterations=50, seed=None, against=None):
        return [self.row]


def _row(passed):
    worst = None if passed else {"seed": "17", "stratum": "boundary/contiguous", "kind": "mismatch",
                                 "message": "out[0, 3] = 1.001 vs 1"}
    return {"dtype": "float32", "fitted": {"atol": 5.97e-08, "rtol": 5.97e-08},
            "check": {"cases": 6, "failed": 0 if passed else 6, "errors": 0, "passed": passed, "worst": worst}}


def test_client_form_raises_when_the_fit_fails_its_recheck():
    # `gpuemu calibrate` exits 1 on a failed re-check; the Python form must not hand back such bounds.
    with pytest.raises(CalibrationError, match=r"did not pass the re-check.*6 of 6 fresh cases.*seed 17") as caught:
        calibrate_tolerance(_CalibratingClient(_row(False)), "matmul", dtype="float32", iterations=6)
    assert caught.value.row["check"]["failed"] == 6
    assert calibrate_tolerance(_CalibratingClient(_row(True)), "matmul", dtype="float32") == {
        "atol": 5.97e-08, "rtol": 5.97e-08}


@pytest.mark.parametrize("module", ["gpuemu", "gpuemu.tolerances"])
def test_calibrate_tolerance_has_its_real_signature(module):
    # help() and IDEs read inspect.signature: both call forms' parameters, not (*args, **kwargs).
    import importlib  # lazy: only this test imports the public paths by name

    function = importlib.import_module(module).calibrate_tolerance
    parameters = inspect.signature(function).parameters
    assert list(parameters) == ["op_fn", "ref_fn", "shapes", "dtype", "n_samples", "seed", "iterations", "against"]
    assert not any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters.values())
    assert parameters["n_samples"].default == 100 and parameters["iterations"].default == 100
    assert parameters["iterations"].kind is inspect.Parameter.KEYWORD_ONLY
    # The signature is the one that runs: the function form by keyword, the op form as faq.txt writes it.
    def ref(a):
        return a.astype(np.float64) * 2.0

    by_keyword = calibrate_tolerance(op_fn=lambda a: a * 2, ref_fn=ref, shapes=[(4, 4)], dtype="float32", n_samples=3)
    assert by_keyword == calibrate_tolerance(lambda a: a * 2, ref, [(4, 4)], "float32", 3)
    assert function(_CalibratingClient(_row(True)), "matmul", dtype="float32", iterations=6) == {
        "atol": 5.97e-08, "rtol": 5.97e-08}
    # A parameter of the other form is refused, naming the one to use, never silently ignored.
    with pytest.raises(TypeError, match="iterations="):
        function(_CalibratingClient(_row(True)), "matmul", n_samples=6)
    with pytest.raises(TypeError, match="n_samples="):
        function(lambda a: a, ref, [(4, 4)], iterations=6)
