# Python's copy of the extends/implementations rule (gpuemu._internal.client.inline) against the C++
# loader's results in tests/vectors/op_family.json (written by scripts/gen-op-family-vectors.sh).
"""Each vector's gpuemu.toml resolved in Python gives the C++ loader's ops: names, kernels, references, dtypes."""

import json
import tomllib
from pathlib import Path

import pytest

from gpuemu._internal.client.inline import CALLABLE_RE, _resolve_extends, result_kernels
from gpuemu._internal.core.dtypes import canonical_dtype

VECTORS = json.loads((Path(__file__).resolve().parents[2] / "tests" / "vectors" / "op_family.json").read_text())


def python_ops(text: str) -> list[dict]:
    """The ops Python makes of a gpuemu.toml text, in the vectors' form."""
    data = tomllib.loads(text)
    default_dtypes = data.get("validation", {}).get("dtypes", ["float32"])
    tables = _resolve_extends({str(t["name"]): t for t in data.get("ops", [])})
    ops = []
    for name, table in tables.items():
        dtypes = [canonical_dtype(d) for d in table.get("dtypes", default_dtypes)]
        for result, kernel in result_kernels(name, table).items():
            ops.append({"name": result, "spec": name, "implementation": result.partition("/")[2], "kernel": kernel,
                        "kernel_is_script": not CALLABLE_RE.match(kernel), "reference": table.get("reference", ""),
                        "reference_is_script": not CALLABLE_RE.match(table.get("reference", "")), "dtypes": dtypes})
    return ops


@pytest.mark.parametrize("case", VECTORS["cases"], ids=[c["name"] for c in VECTORS["cases"]])
def test_python_resolves_each_vector_as_the_loader_does(case):
    assert case["ops"], "the vector has no ops: run scripts/gen-op-family-vectors.sh"
    assert python_ops("\n".join(case["toml"])) == case["ops"]  # in file order, implementations in theirs


def test_a_drift_from_the_rule_is_found():
    # The check can fail: the kernel keys inherited one by one instead of together.
    case = next(c for c in VECTORS["cases"] if "names op_script" in c["name"])
    data = tomllib.loads("\n".join(case["toml"]))
    child = next(t for t in data["ops"] if "extends" in t)
    parent = next(t for t in data["ops"] if t["name"] == child["extends"])
    drifted = {**parent, **child}  # keeps the parent's implementations beside the child's op_script
    assert result_kernels(child["name"], drifted) != {op["name"]: op["kernel"] for op in case["ops"]
                                                       if op["spec"] == child["name"]}
