"""A framework reference gets float64 tensors (docs/frameworks.md): float16, bfloat16 and float32
inputs arrive widened to float64 with the same values, in torch, JAX and TensorFlow; ops and numpy
references keep the case's dtype, and integer inputs are never widened."""

from __future__ import annotations

import numpy as np
import pytest

from framework_cases import case_storage, every_16bit_pattern, need
from gpuemu._internal.core.dtypes import from_bf16_bits
from gpuemu.frameworks import FRAMEWORKS as ALL_FRAMEWORKS, AdapterSettings, Converter, adapter

FRAMEWORKS = [name for name in ALL_FRAMEWORKS if name != "numpy"]  # the frameworks with tensors of their own


def converter(framework: str, role: str) -> Converter:
    need(adapter(framework).MODULE)
    return Converter(AdapterSettings(framework=framework, device="cpu", role=role))


def as_numpy(x) -> np.ndarray:
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def exact_values(storage: np.ndarray, dtype: str) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.asarray(from_bf16_bits(storage) if dtype == "bfloat16" else storage, dtype=np.float64)


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "scalar"])
def test_a_framework_reference_gets_float64_of_the_same_values(framework, dtype, layout):
    storage = case_storage(dtype, layout)
    x = as_numpy(converter(framework, "reference").input(storage, dtype, "x", "softmax"))
    assert x.dtype == np.float64 and x.shape == storage.shape
    assert np.array_equal(x, exact_values(storage, dtype))


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_every_16bit_value_widens_exactly_nan_and_infinity_included(framework, dtype):
    storage = every_16bit_pattern(dtype)
    x = as_numpy(converter(framework, "reference").input(storage, dtype, "x"))
    assert x.dtype == np.float64
    assert np.array_equal(x, exact_values(storage, dtype), equal_nan=True)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_ops_and_integer_inputs_keep_their_dtype(framework):
    op = converter(framework, "op").input(case_storage("float16", "contiguous"), "float16", "x")
    assert as_numpy(op).dtype == np.float16
    ref = converter(framework, "reference").input(case_storage("int32", "contiguous"), "int32", "n")
    assert as_numpy(ref).dtype == np.int32


def test_a_numpy_reference_keeps_the_case_dtype():
    x = converter_numpy().input(case_storage("float32", "contiguous"), "float32", "x")
    assert np.asarray(x).dtype == np.float32


def converter_numpy() -> Converter:
    return Converter(AdapterSettings(framework="numpy", role="reference"))
