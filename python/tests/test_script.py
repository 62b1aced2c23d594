"""Tests for gpuemu.script, the helpers op and reference scripts use to speak the JSON+base64
script protocol: request decoding (real strides), reply encoding per role, serve() registration.
"""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from gpuemu import script
from gpuemu._internal.wire import tensors

PYTHON_DIR = Path(__file__).resolve().parents[1]


def tensor_json(arr: np.ndarray, dtype: str | None = None, strides=None, storage=None) -> dict:
    obj = tensors.encode_tensor(arr if storage is None else storage, dtype)
    obj["shape"] = list(arr.shape)
    if strides is not None:
        obj["strides"] = list(strides)
    return obj


def request(inputs: dict, kwargs=None, dtype="float32") -> str:
    body = {"inputs": inputs, "kwargs": kwargs or {}}
    if dtype is not None:
        body["dtype"] = dtype
    return json.dumps(body)


def reply_of(fn, req: str, role="op") -> dict:
    out = io.StringIO()
    script.run_once(fn, role, stdin=io.StringIO(req), stdout=out)
    text = out.getvalue()
    assert text.endswith("\n") and text.count("\n") == 1, "the reply is exactly one line"
    return json.loads(text)


def decode(obj: dict) -> np.ndarray:
    return tensors.decode_tensor(obj)


# ─── read_request ────────────────────────────────────────────────────────────────────────

def test_read_request_returns_arrays_kwargs_and_case_dtype():
    x = np.arange(6, dtype=np.float16).reshape(2, 3)
    inputs, kwargs, dtype = script.read_request(io.StringIO(request({"x": tensor_json(x)}, {"dim": -1}, "float16")))
    assert dtype == "float16" and kwargs == {"dim": -1}
    assert inputs["x"].dtype == np.float16 and inputs["x"].tolist() == x.tolist()


def test_read_request_hands_out_a_strided_view_with_real_strides():
    # Storage of a 2x3 matrix with 2 elements of padding per row; the padding holds 99.
    storage = np.array([0, 1, 2, 99, 99, 3, 4, 5, 99, 99], dtype=np.float32)
    logical = np.array([[0, 1, 2], [3, 4, 5]], dtype=np.float32)
    obj = tensor_json(logical, strides=[5, 1], storage=storage)
    inputs, _, _ = script.read_request(io.StringIO(request({"a": obj})))
    a = inputs["a"]
    assert a.tolist() == logical.tolist()
    assert a.strides == (5 * 4, 4) and not a.flags.c_contiguous


def test_read_request_transposed_layout_is_column_major():
    logical = np.arange(6, dtype=np.float32).reshape(2, 3)
    obj = tensor_json(logical, strides=[1, 2], storage=np.ascontiguousarray(logical.T))
    inputs, _, _ = script.read_request(io.StringIO(request({"a": obj})))
    assert inputs["a"].tolist() == logical.tolist() and inputs["a"].strides == (4, 8)


def test_read_request_decodes_bfloat16_to_exact_float32():
    bits = np.array([0x3F80, 0xC040, 0x0001], dtype=np.uint16)  # 1.0, -3.0, the smallest subnormal
    obj = {"shape": [3], "strides": [1], "dtype": "bfloat16", "data": base64.b64encode(bits.tobytes()).decode()}
    inputs, _, dtype = script.read_request(io.StringIO(request({"x": obj}, dtype="bfloat16")))
    assert dtype == "bfloat16" and inputs["x"].dtype == np.float32
    assert inputs["x"].tolist() == [1.0, -3.0, 2.0**-133]


def test_read_request_without_case_dtype_uses_the_first_float_input():
    idx = tensor_json(np.array([1, 2], dtype=np.int64))
    x = tensor_json(np.zeros(2, dtype=np.float16))
    _, _, dtype = script.read_request(io.StringIO(request({"i": idx, "x": x}, dtype=None)))
    assert dtype == "float16"
    _, _, dtype = script.read_request(io.StringIO(request({"i": idx}, dtype=None)))
    assert dtype == "float32"


@pytest.mark.parametrize("text,needle", [
    ("not json", "not one JSON request"),
    ("[1, 2]", "must be a JSON object"),
    ('{"inputs": [1]}', "'inputs' must be an object"),
    ('{"inputs": {}, "kwargs": [1]}', "'kwargs' must be an object"),
])
def test_read_request_rejects_malformed_requests(text, needle):
    with pytest.raises(ValueError, match=needle):
        script.read_request(io.StringIO(text))


# ─── replies ─────────────────────────────────────────────────────────────────────────────

def test_op_float32_output_of_a_bfloat16_case_is_rounded_to_bfloat16_on_the_wire():
    x = np.array([1.0, 1.00390625, 1.01171875], dtype=np.float32)  # exact bf16 values
    req = request({"x": tensor_json(x, "bfloat16")}, dtype="bfloat16")
    # bf16 keeps 7 fraction bits: 1 + 2^-8 and 1 + 3*2^-8 are ties, and round to the even neighbour.
    reply = reply_of(lambda inputs: np.array([1.0, 1 + 2.0**-8, 1 + 3 * 2.0**-8], np.float32), req)
    assert reply["dtype"] == "bfloat16"
    assert decode(reply).tolist() == [1.0, 1.0, 1 + 2.0**-6]


def test_reference_output_keeps_float64_even_for_a_bfloat16_case():
    req = request({"x": tensor_json(np.ones(2, np.float32), "bfloat16")}, dtype="bfloat16")
    reply = reply_of(lambda inputs: np.array([1 / 3, 2 / 3]), req, role="reference")
    assert reply["dtype"] == "float64" and decode(reply).tolist() == [1 / 3, 2 / 3]


def test_reference_float32_output_of_a_bfloat16_case_is_not_rounded():
    req = request({"x": tensor_json(np.ones(1, np.float32), "bfloat16")}, dtype="bfloat16")
    value = np.float32(1 + 2.0**-20)
    reply = reply_of(lambda inputs: np.array([value]), req, role="reference")
    assert reply["dtype"] == "float32" and decode(reply)[0] == value


@pytest.mark.parametrize("case,arr_dtype,wire", [
    ("float16", np.float16, "float16"),
    ("float32", np.float32, "float32"),
    ("float16", np.float32, "float32"),  # an op that returns fp32 for an fp16 case keeps fp32
    ("bfloat16", np.float64, "float64"),  # only float32 stands in for bfloat16
    ("bfloat16", np.int64, "int64"),
])
def test_op_outputs_keep_their_own_dtype_otherwise(case, arr_dtype, wire):
    req = request({}, dtype=case)
    reply = reply_of(lambda inputs: np.arange(3).astype(arr_dtype), req)
    assert reply["dtype"] == wire and decode(reply).tolist() == [0, 1, 2]


def test_dict_of_outputs_becomes_the_outputs_form_and_is_contiguous():
    req = request({}, dtype="bfloat16")
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    before = time.monotonic_ns()
    reply = reply_of(lambda inputs: {"y": m.T, "idx": np.array([3, 1], np.int32)}, req)
    # "launches" joins once Triton is imported in the process (the launch layer counts them).
    assert set(reply) - {"launches"} == {"outputs", "elapsed_ns", "called_ns", "runtime"}
    # When the call began, on CLOCK_MONOTONIC (gpuemu's steady clock): how gpuemu tells the op's
    # time and the reference's apart when they run at the same time.
    assert before <= reply["called_ns"] <= time.monotonic_ns()
    y, idx = reply["outputs"]["y"], reply["outputs"]["idx"]
    assert y["dtype"] == "bfloat16" and idx["dtype"] == "int32"
    assert y["shape"] == [3, 2] and decode(y).tolist() == m.T.tolist()


def test_reply_says_how_long_the_function_took_and_what_ran():
    import time

    req = request({}, dtype="float32")
    reply = reply_of(lambda inputs: (time.sleep(0.05), np.zeros(2, np.float32))[1], req)
    assert 50_000_000 <= reply["elapsed_ns"] < 5_000_000_000
    assert reply["runtime"]["framework"] == "numpy" and reply["runtime"]["framework_version"] == np.__version__


def test_reply_names_the_interpreter_only_when_the_code_imported_triton(monkeypatch):
    import sys
    import types

    req = request({}, dtype="float32")
    assert "triton" not in reply_of(lambda inputs: np.zeros(1), req)["runtime"] or "triton" in sys.modules
    monkeypatch.setitem(sys.modules, "triton", types.ModuleType("triton"))
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert reply_of(lambda inputs: np.zeros(1), req)["runtime"]["triton"] == "interpreter"
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    assert reply_of(lambda inputs: np.zeros(1), req)["runtime"]["triton"] == "gpu"


def test_kwargs_are_passed_as_keyword_arguments():
    req = request({"x": tensor_json(np.array([2.0], np.float32))}, {"scale": 3.0, "axis": 0})
    reply = reply_of(lambda inputs, scale, axis: inputs["x"] * scale + axis, req)
    assert decode(reply).tolist() == [6.0]


def test_write_output_forces_the_wire_dtype_of_float_outputs_only():
    out = io.StringIO()
    script.write_output({"y": np.array([1 + 2.0**-8], np.float32), "n": np.array([5])}, dtype="bfloat16", stream=out)
    reply = json.loads(out.getvalue())["outputs"]
    assert reply["y"]["dtype"] == "bfloat16" and decode(reply["y"]).tolist() == [1.0]
    assert reply["n"]["dtype"] == "int64"


def test_write_output_single_array_keeps_its_own_dtype():
    out = io.StringIO()
    script.write_output(np.array([[2.5], [-1.0]], np.float16), stream=out)
    reply = json.loads(out.getvalue())
    assert reply["shape"] == [2, 1] and reply["dtype"] == "float16" and decode(reply).tolist() == [[2.5], [-1.0]]


@pytest.mark.parametrize("bad,needle", [
    ({}, "empty dict"),
    ("text", "not a numeric array|cannot encode"),
    ([object()], "not a numeric array"),
])
def test_bad_return_values_raise(bad, needle):
    with pytest.raises((TypeError, ValueError), match=needle):
        script.encode_outputs(bad, "float32", "op")


def test_unknown_role_is_rejected():
    with pytest.raises(ValueError, match="role"):
        script.main(lambda inputs: inputs, role="oracle")
    with pytest.raises(ValueError, match="role"):
        script.output_dtype(np.zeros(1), "float32", role="ref")


# ─── serve(): cold as a program, registration when imported ───────────────────────────────

SCRIPT = textwrap.dedent('''
    """test script: doubles x; a second line of docstring."""
    import numpy as np
    from gpuemu.script import serve

    def double(inputs, bias=0.0):
        return inputs["x"] * 2 + np.float32(bias)

    serve(double, role="{role}")
''')


def run_script(path: Path, stdin: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PYTHON_DIR), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, str(path)], input=stdin, capture_output=True, text=True, env=env,
                          timeout=60)


def test_serve_as_a_program_answers_one_request(tmp_path):
    path = tmp_path / "double.py"
    path.write_text(SCRIPT.format(role="op"))
    x = np.array([1.5, -2.0], np.float32)
    proc = run_script(path, request({"x": tensor_json(x, "bfloat16")}, {"bias": 1.0}, "bfloat16"))
    assert proc.returncode == 0, proc.stderr
    reply = json.loads(proc.stdout)
    assert reply["dtype"] == "bfloat16" and decode(reply).tolist() == [4.0, -3.0]


def test_serve_when_imported_only_registers(tmp_path, monkeypatch):
    import importlib.util

    path = tmp_path / "double_ref.py"
    path.write_text(SCRIPT.format(role="reference"))
    # A stdin that fails when read proves nothing is read at import time.
    monkeypatch.setattr(sys, "stdin", None)
    script.clear_registered()
    assert script.registered() is None
    spec = importlib.util.spec_from_file_location("double_ref_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fn = script.registered()
    assert fn is module.double and script.registered_role() == "reference"
    assert fn({"x": np.array([3.0])}, bias=1.0).tolist() == [7.0]
    script.clear_registered()
    assert script.registered() is None and script.registered_role() is None


def test_a_failing_function_exits_non_zero_with_its_traceback(tmp_path):
    path = tmp_path / "boom.py"
    path.write_text(textwrap.dedent('''
        """test script that fails."""
        from gpuemu.script import main
        def boom(inputs):
            raise RuntimeError("kernel exploded")
        main(boom)
    '''))
    proc = run_script(path, request({}))
    assert proc.returncode != 0 and proc.stdout == ""
    assert "kernel exploded" in proc.stderr


def test_garbage_stdin_exits_non_zero_naming_the_problem(tmp_path):
    path = tmp_path / "ok.py"
    path.write_text(SCRIPT.format(role="op"))
    proc = run_script(path, "{truncated")
    assert proc.returncode != 0 and "not one JSON request" in proc.stderr
