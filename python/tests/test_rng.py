# Tests for gpuemu._internal.core.rng: the published vectors, gen_range bounds and errors, normal/randn moments,
# derive and generate_seed, and the vectorised counter stream and multiply-high helpers.
import math

import numpy as np
import pytest

from gpuemu import SeededRng, derive_seed, generate_seed
from gpuemu._internal.core.rng import counter_at, counter_stream, mulhi, splitmix64


def test_published_vectors():
    rng = SeededRng(42)
    assert [rng.gen_u64() for _ in range(3)] == [14921385303349856026, 836881716698787820, 2679325795615653720]
    assert derive_seed(42, "test") == 11905773293262258603


def test_splitmix64_reference_output():
    state, out = splitmix64(0)
    assert out == 0xE220A8397B1DCDAF
    assert state == 0x9E3779B97F4A7C15


def test_seed_must_be_u64():
    for bad in (-1, 1 << 64):
        with pytest.raises(ValueError, match="2\\^64"):
            SeededRng(bad)
    with pytest.raises(TypeError):
        SeededRng(1.5)
    with pytest.raises(TypeError):
        derive_seed(1, b"bytes")


def test_max_seed_wraps_for_second_state_word():
    rng = SeededRng((1 << 64) - 1)
    assert 0 <= rng.gen_u64() < 1 << 64


def test_unit_floats_in_half_open_interval():
    rng = SeededRng(1)
    for _ in range(5000):
        assert 0.0 <= rng.next_f64() < 1.0
        f = rng.gen_f32()
        assert 0.0 <= f < 1.0 and float(np.float32(f)) == f


def test_gen_range_bounds_uniformity_and_errors():
    rng = SeededRng(3)
    counts = {}
    for _ in range(30000):
        v = rng.gen_range(-3, 3)
        counts[v] = counts.get(v, 0) + 1
    assert sorted(counts) == [-3, -2, -1, 0, 1, 2]
    assert all(abs(n - 5000) < 400 for n in counts.values())
    with pytest.raises(ValueError, match="low < high"):
        rng.gen_range(5, 5)
    with pytest.raises(ValueError, match="2\\^64"):
        rng.gen_range(0, (1 << 64) + 1)
    assert 0 <= rng.gen_range(0, 1 << 64) < 1 << 64


def test_choice_and_derive():
    rng = SeededRng(5)
    items = ["a", "b", "c"]
    assert {rng.choice(items) for _ in range(200)} == set(items)
    with pytest.raises(ValueError):
        rng.choice([])
    parent, twin = SeededRng(7), SeededRng(7)
    child = parent.derive("input/x")
    assert child.seed == derive_seed(7, "input/x")
    assert parent.gen_u64() == twin.gen_u64()


def test_normal_moments_and_randn():
    rng = SeededRng(11)
    z = np.array([rng.normal() for _ in range(50000)])
    assert abs(z.mean()) < 0.02 and abs(z.std() - 1.0) < 0.02
    a = SeededRng(12).randn((3, 4))
    b = SeededRng(12)
    assert a.shape == (3, 4) and a.dtype == np.float64
    assert a[0, 1] == [b.normal() for _ in range(2)][1]
    with pytest.raises(ValueError):
        SeededRng(1).randn((2, -1))


def test_generate_seed_is_fresh():
    seeds = {generate_seed() for _ in range(20)}
    assert len(seeds) == 20 and all(0 <= s < 1 << 64 for s in seeds)


def test_counter_stream_matches_scalar_splitmix():
    state = 987654321
    expected = []
    for _ in range(10):
        state, out = splitmix64(state)
        expected.append(out)
    assert [int(v) for v in counter_stream(987654321, 10)] == expected
    assert [int(v) for v in counter_at(987654321, np.array([9, 0], dtype=np.uint64))] == [expected[9], expected[0]]


def test_mulhi_matches_big_integers():
    rng = SeededRng(99)
    u = np.array([rng.gen_u64() for _ in range(2000)] + [0, (1 << 64) - 1], dtype=np.uint64)
    for n in (1, 2, 3, 255, 1 << 32, (1 << 32) + 7, (1 << 63) + 1, (1 << 64) - 1, 1 << 64):
        got = mulhi(u, n)
        want = [(int(x) * n) >> 64 for x in u]
        assert [int(g) for g in got] == want, n
    with pytest.raises(ValueError):
        mulhi(u, 0)
    assert math.isclose(float(mulhi(np.array([1 << 63], dtype=np.uint64), 10)[0]), 5.0)
