# The Python copy of the failure kinds (gpuemu/_failure_kinds.py, generated from src/check/failure_kinds.cpp
# and kept current by the C++ test FailureKinds.PythonConstantsAreCurrent) covers every kind Python names.
import pytest

from gpuemu import errors
from gpuemu._failure_kinds import CASE_KINDS, REPORT_ONLY_KINDS, RULE_IDS
from gpuemu._internal.core import compare


def test_every_kind_python_names_is_a_case_kind():
    kinds = {cls.kind for cls in [errors.CaseFailure, *errors.CaseFailure.__subclasses__()]}
    assert kinds <= set(CASE_KINDS)
    assert set(compare._ORDER) <= set(CASE_KINDS)
    assert {"input_mutated", "output_aliased", "reference_error", "missing_output"} <= set(CASE_KINDS)


def test_report_only_kinds_have_rules_but_are_no_case_kinds():
    assert set(REPORT_ONLY_KINDS) == {"regression", "lint_violation", "not_run"}
    assert not set(REPORT_ONLY_KINDS) & set(CASE_KINDS)
    assert set(RULE_IDS) == set(CASE_KINDS) | set(REPORT_ONLY_KINDS)
    assert RULE_IDS["not_run"] == "GPUEMU-NOT-RUN"


def test_a_case_failure_with_an_unknown_kind_is_refused_at_definition():
    with pytest.raises(TypeError, match="'wrong_answer' is no failure kind"):
        type("Bad", (errors.CaseFailure,), {"kind": "wrong_answer"})
    assert type("Good", (errors.CaseFailure,), {"kind": "out_of_bounds"}).kind == "out_of_bounds"
