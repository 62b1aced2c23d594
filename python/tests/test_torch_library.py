# gpuemu.torch_library: one gpuemu.toml entry per op of a drop-in torch op library, the op a call expression
# and its reference torch's op of the same name (issue 40); the e2e use is tests/e2e/test_flag_gems.py.
"""python/gpuemu/torch_library.py against torch on CPU, with a stand-in library module written to tmp_path."""

from __future__ import annotations

import sys
import textwrap

import pytest
import torch

from gpuemu import torch_library

LIBRARY = '''
import torch

calls = []


def softmax(x, dim):
    calls.append("softmax")
    return torch.softmax(x.float(), dim).to(x.dtype)


def max_dim(x, dim):
    calls.append("max_dim")
    return torch.max(x, dim)


def gelu(x):
    calls.append("gelu")
    return x * 0.5  # wrong on purpose: the reference must not be this
'''


@pytest.fixture
def library(tmp_path, monkeypatch):
    (tmp_path / "fakelib").mkdir()
    (tmp_path / "fakelib" / "__init__.py").write_text("")
    (tmp_path / "fakelib" / "ops.py").write_text(textwrap.dedent(LIBRARY))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    for name in [m for m in sys.modules if m == "fakelib" or m.startswith("fakelib.")]:
        del sys.modules[name]


def test_op_calls_the_library_and_reference_calls_torch_of_the_same_name(library):
    x = torch.randn(3, 5, dtype=torch.float16)
    out = torch_library.op({"x": x}, call="fakelib.ops.softmax(x, -1)")
    assert out.dtype == torch.float16 and sys.modules["fakelib.ops"].calls == ["softmax"]
    wide = torch_library.reference({"x": x.double()}, call="fakelib.ops.softmax(x, -1)")
    assert wide.dtype == torch.float64 and torch.allclose(wide, torch.softmax(x.double(), -1))
    assert sys.modules["fakelib.ops"].calls == ["softmax"]  # the reference never called the library


def test_reference_is_found_in_torch_functional_when_torch_has_no_such_name(library):
    x = torch.randn(4, dtype=torch.float64)
    assert torch_library.torch_function("gelu") is torch.nn.functional.gelu
    assert torch.equal(torch_library.reference({"x": x}, call="fakelib.ops.gelu(x)"), torch.nn.functional.gelu(x))


def test_an_explicit_reference_and_an_indexed_call(library):
    x = torch.randn(3, 5, dtype=torch.float64)
    call = "fakelib.ops.max_dim(x, 1)[0]"
    assert torch.equal(torch_library.op({"x": x}, call=call), torch.max(x, 1)[0])
    assert torch.equal(torch_library.reference({"x": x}, call=call, reference="torch.max(x, 1)[0]"), torch.max(x, 1)[0])


def test_a_tuple_result_is_named_outputs(library):
    x = torch.randn(3, 5, dtype=torch.float64)
    out = torch_library.op({"x": x}, call="fakelib.ops.max_dim(x, 1)")
    assert list(out) == ["out0", "out1"] and torch.equal(out["out1"], torch.max(x, 1)[1])


@pytest.mark.parametrize("call, message", [
    ("fakelib.ops.no_such_op(x)", "no torch op named 'no_such_op'"),
    ("x + 1", "calls nothing"),
    ("fakelib.ops.softmax(x,", "is not a Python expression"),
])
def test_a_call_the_reference_cannot_follow_says_what_to_write(library, call, message):
    with pytest.raises(ValueError, match=message):
        torch_library.reference({"x": torch.zeros(2, dtype=torch.float64)}, call=call)
