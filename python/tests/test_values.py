# Tests for gpuemu._internal.core.values: every dtype and distribution stays inside its domain and dtype, each
# adversarial pattern has its defining property, and elements are independent (counter-based).
import math

import numpy as np
import pytest

from gpuemu._internal.core.dtypes import DTYPE_NAMES, float_info, is_floating, to_bf16_bits
from gpuemu._internal.wire.tensors import numpy_dtype
from gpuemu._internal.core.values import DISTRIBUTIONS, FLOAT_PATTERNS, INT_PATTERNS, describe_values, generate_tensor, resolve_domain

FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["int8", "int16", "int32", "int64", "uint8"]


def seed_for(dtype, want, domain=(-1.0, 1.0)):
    dist = want.split("/")[0]
    return next(s for s in range(10000) if describe_values(s, dtype, dist, domain) == want)


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
@pytest.mark.parametrize("domain", [(-1.0, 1.0), "any", (0.25, 1000.0)])
def test_values_stay_inside_domain_and_dtype(dtype, distribution, domain):
    lo, hi, _ = resolve_domain(dtype, domain)
    for seed in range(8):
        arr = generate_tensor(seed, dtype, (6, 9), domain, distribution)
        assert arr.dtype == numpy_dtype(dtype) and arr.shape == (6, 9) and arr.flags.c_contiguous
        if dtype == "bool":
            continue
        wide = arr.astype(np.float64) if is_floating(dtype) else arr.astype(object)
        assert np.all(np.isfinite(arr.astype(np.float64)))
        assert all(lo <= v <= hi for v in wide.ravel()), (seed, wide.min(), wide.max())
        if dtype == "bfloat16":
            assert np.array_equal(to_bf16_bits(arr), to_bf16_bits(arr.astype(np.float64)))
        assert np.array_equal(arr, generate_tensor(seed, dtype, (6, 9), domain, distribution))


def test_seeds_differ_and_mixed_covers_all_three():
    a = generate_tensor(1, "float32", (64,), "any", "regular")
    b = generate_tensor(2, "float32", (64,), "any", "regular")
    assert not np.array_equal(a, b)
    kinds = {describe_values(s, "float32", "mixed").split("/")[0] for s in range(60)}
    assert kinds == {"regular", "boundary", "adversarial"}


def test_elements_are_independent_of_tensor_size():
    for dist in ("regular", "boundary"):
        small = generate_tensor(5, "float32", (10,), "any", dist)
        large = generate_tensor(5, "float32", (1000,), "any", dist)
        assert np.array_equal(small, large[:10])


def test_regular_bounded_is_uniform_or_bell_and_any_is_moderate():
    uni = generate_tensor(seed_for("float64", "regular/uniform"), "float64", (20000,), (-1.0, 1.0), "regular")
    bell = generate_tensor(seed_for("float64", "regular/bell"), "float64", (20000,), (-1.0, 1.0), "regular")
    assert abs(uni.std() - 1 / math.sqrt(3)) < 0.02
    assert abs(bell.std() - 1 / math.sqrt(12)) < 0.02
    any_ = generate_tensor(3, "float32", (20000,), "any", "regular")
    assert np.abs(any_).max() <= 256 and np.abs(any_).min() < 0.01


def test_boundary_float16_any_reaches_the_special_values():
    arr = generate_tensor(9, "float16", (4000,), "any", "boundary").astype(np.float64)
    info = float_info("float16")
    for v in (0.0, 1.0, -1.0, info.min_normal, info.min_subnormal, info.max_finite, -info.max_finite, 2.0**-16):
        assert v in arr, v
    assert np.signbit(arr[arr == 0]).any() and (~np.signbit(arr[arr == 0])).any()


def test_boundary_respects_positive_domain():
    arr = generate_tensor(4, "float32", (2000,), (0.25, 1000.0), "boundary").astype(np.float64)
    assert arr.min() == 0.25 and arr.max() == 1000.0
    assert set(np.unique(arr)) >= {1.0, 0.5, 2.0**9}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("pattern", FLOAT_PATTERNS)
def test_float_patterns_have_their_property(dtype, pattern):
    domain = "any" if pattern in ("dynamic_range", "huge_logits", "one_hot") else (-1.0, 1.0)
    arr = generate_tensor(seed_for(dtype, "adversarial/" + pattern, domain), dtype, (16, 32), domain, "adversarial")
    x = arr.astype(np.float64)
    big = float_info(dtype).max_finite
    if pattern == "dynamic_range":
        exps = np.frexp(np.abs(x[x != 0]))[1]
        assert exps.max() - exps.min() > 30
    elif pattern == "huge_logits":
        assert (np.abs(x) > 0.9 * big).sum() > 10 and (np.abs(x) < 300).sum() > 300
    elif pattern == "near_cancellation":
        pairs = x.reshape(-1, 2)
        scale = np.abs(pairs[:, 0]).max()
        assert np.all(np.abs(pairs.sum(axis=1)) <= scale * 2.0 ** -(float_info(dtype).mantissa_bits - 2))
        assert np.all(np.sign(pairs[:, 0]) == -np.sign(pairs[:, 1]))
    elif pattern == "ties":
        assert len(np.unique(x)) <= 4 and (x == x.max()).sum() > 1
    elif pattern == "zero_rows":
        zero_rows = np.all(x == 0, axis=1)
        assert zero_rows.any() and not zero_rows.all()
    elif pattern == "one_hot":
        assert np.all((x != 0).sum(axis=1) == 1) and np.all(x.max(axis=1) == big)
    elif pattern == "alternating_signs":
        assert np.all(x[:, 0::2] >= 0) and np.all(x[:, 1::2] <= 0)


@pytest.mark.parametrize("pattern", INT_PATTERNS)
def test_int_patterns_have_their_property(pattern):
    domain = (-100.0, 100.0)
    x = generate_tensor(seed_for("int16", "adversarial/" + pattern, domain), "int16", (16, 32), domain, "adversarial")
    if pattern == "extremes":
        assert (x == -100).sum() > 50 and (x == 100).sum() > 50
    elif pattern == "ties":
        assert len(np.unique(x)) <= 4
    elif pattern == "zero_rows":
        assert np.all(x == 0, axis=1).any()
    elif pattern == "one_hot":
        assert np.all((x != 0).sum(axis=1) == 1) and x.max() == 100


def test_integer_domains():
    x = generate_tensor(1, "int32", (5000,), (-2.5, 3.7), "regular")
    assert set(np.unique(x)) == {-2, -1, 0, 1, 2, 3}
    u = generate_tensor(1, "uint8", (20000,), "any", "regular")
    assert u.min() == 0 and u.max() == 255
    big = generate_tensor(1, "int64", (1000,), "any", "regular")
    assert np.abs(big.astype(np.float64)).max() > 2.0**60
    b = generate_tensor(1, "int8", (2000,), "any", "boundary")
    assert {-128, -127, -1, 0, 1, 126, 127, 64, -64} <= set(np.unique(b).tolist())


def test_bool_is_balanced():
    b = generate_tensor(1, "bool", (10000,), "any", "adversarial")
    assert b.dtype == np.bool_ and 4700 < b.sum() < 5300


def test_domain_resolution():
    assert resolve_domain("float16", (0.1, 0.2)) == (0.10003662109375, 0.199951171875, False)
    assert resolve_domain("float16", (0.0, math.inf))[1] == 65504.0
    assert resolve_domain("int8", (-math.inf, 1e30)) == (-128, 127, False)
    assert resolve_domain("bfloat16", "any")[1] == float_info("bfloat16").max_finite


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="unknown value distribution 'normal'"):
        generate_tensor(1, "float32", (2,), (-1.0, 1.0), "normal")
    with pytest.raises(ValueError, match="unknown dtype 'float8'"):
        generate_tensor(1, "float8", (2,))
    with pytest.raises(ValueError, match="negative dimension"):
        generate_tensor(1, "float32", (2, -1))
    with pytest.raises(ValueError, match="lo <= hi"):
        generate_tensor(1, "float32", (2,), (math.nan, 1.0))
    with pytest.raises(ValueError, match="holds no int8 value"):
        generate_tensor(1, "int8", (2,), (0.2, 0.8))
    with pytest.raises(ValueError, match='"any"'):
        generate_tensor(1, "float32", (2,), "all")


def test_empty_and_scalar_shapes():
    assert generate_tensor(1, "float16", (0, 3)).shape == (0, 3)
    s = generate_tensor(1, "float32", (), "any", "adversarial")
    assert s.shape == () and np.isfinite(s)
