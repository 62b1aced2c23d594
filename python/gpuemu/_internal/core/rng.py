# The seeded scalar generator that replay depends on, byte-identical with src/rng/seeded_rng.cpp.
# docs/rng.md is the normative spec; tests/vectors/rng.json pins it for both languages.
"""Seeded random numbers: SeededRng, derive_seed, generate_seed and counter-based streams."""

from __future__ import annotations

import hashlib
import math
import os
from typing import Sequence, TypeVar

import numpy as np

__all__ = [
    "SeededRng",
    "derive_seed",
    "generate_seed",
    "splitmix64",
    "counter_stream",
    "counter_at",
    "mulhi",
]

MASK64 = (1 << 64) - 1
GOLDEN_GAMMA = 0x9E3779B97F4A7C15
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB
_TWO_PI = 6.283185307179586  # the double nearest 2*pi (math.tau; C++ 2 * std::numbers::pi)

T = TypeVar("T")


def _check_u64(value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} must be an int in [0, 2^64), got {type(value).__name__}")
    value = int(value)
    if not 0 <= value <= MASK64:
        raise ValueError(f"{what} must be in [0, 2^64), got {value}; seeds are unsigned 64-bit")
    return value


def _mix64(z: int) -> int:
    z = ((z ^ (z >> 30)) * _MIX1) & MASK64
    z = ((z ^ (z >> 27)) * _MIX2) & MASK64
    return z ^ (z >> 31)


def splitmix64(state: int) -> tuple[int, int]:
    """One SplitMix64 step: returns (new_state, output)."""
    state = (state + GOLDEN_GAMMA) & MASK64
    return state, _mix64(state)


def derive_seed(seed: int, domain: str) -> int:
    """BLAKE2b (8-byte digest) of seed's 8 little-endian bytes + UTF-8 domain, as a little-endian u64."""
    seed = _check_u64(seed, "seed")
    if not isinstance(domain, str):
        raise TypeError(f"domain must be a str, got {type(domain).__name__}")
    digest = hashlib.blake2b(seed.to_bytes(8, "little") + domain.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def generate_seed() -> int:
    """A fresh seed from system entropy (os.urandom); not reproducible by design."""
    return int.from_bytes(os.urandom(8), "little")


class SeededRng:
    """xorshift128+ variant (stores x^y) seeded through SplitMix64; see docs/rng.md section 1."""

    def __init__(self, seed: int):
        self._seed = _check_u64(seed, "seed")
        _, self._s0 = splitmix64(self._seed)
        _, self._s1 = splitmix64((self._seed + 1) & MASK64)

    @property
    def seed(self) -> int:
        return self._seed

    def gen_u64(self) -> int:
        x = self._s0
        y = self._s1
        self._s0 = y
        x ^= (x << 23) & MASK64
        x ^= x >> 17
        x ^= y ^ (y >> 26)
        self._s1 = x ^ y
        return (x + y) & MASK64

    # The C++ spelling, so ports of C++ code read the same.
    next_u64 = gen_u64

    def next_f64(self) -> float:
        """(u >> 11) / 2^53, in [0, 1)."""
        return (self.gen_u64() >> 11) * (1.0 / 9007199254740992.0)

    def gen_f32(self) -> float:
        """A float32 value in [0, 1): (u >> 40) / 2^24, exact in float32 (returned as a Python float)."""
        return (self.gen_u64() >> 40) * (1.0 / 16777216.0)

    def gen_range(self, low: int, high: int) -> int:
        """Uniform int in [low, high) by Lemire's multiply-shift with rejection (unbiased)."""
        low = int(low)
        high = int(high)
        span = high - low
        if span <= 0:
            raise ValueError(f"gen_range needs low < high, got [{low}, {high})")
        if span > 1 << 64:
            raise ValueError(f"gen_range span {span} exceeds 2^64; split the range")
        if span == 1 << 64:
            return low + self.gen_u64()
        product = self.gen_u64() * span
        if (product & MASK64) < span:
            threshold = ((1 << 64) - span) % span
            while (product & MASK64) < threshold:
                product = self.gen_u64() * span
        return low + (product >> 64)

    def normal(self) -> float:
        """Standard normal by Box-Muller (cos branch), two draws: sqrt(-2 log(1-u1)) * cos(2 pi u2)."""
        u1 = self.next_f64()
        u2 = self.next_f64()
        return math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(_TWO_PI * u2)

    def choice(self, items: Sequence[T]) -> T:
        if len(items) == 0:
            raise ValueError("choice() needs a non-empty sequence")
        return items[self.gen_range(0, len(items))]

    def derive(self, domain: str) -> "SeededRng":
        """A child generator seeded with derive_seed(self.seed, domain); does not advance self."""
        return SeededRng(derive_seed(self._seed, domain))

    def randn(self, shape: tuple[int, ...] | int) -> np.ndarray:
        """float64 array of successive normal() draws in row-major order (scalar libm path)."""
        dims = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
        if any(d < 0 for d in dims):
            raise ValueError(f"randn shape {dims} has a negative dimension")
        out = np.empty(dims, dtype=np.float64)
        flat = out.reshape(-1)
        for i in range(flat.size):
            flat[i] = self.normal()
        return out

    def __repr__(self) -> str:
        return f"SeededRng(seed={self._seed})"


def counter_stream(stream_seed: int, count: int, start: int = 0) -> np.ndarray:
    """Outputs start..start+count-1 of SplitMix64 from state stream_seed, vectorised."""
    return counter_at(stream_seed, np.arange(start, start + count, dtype=np.uint64))


def counter_at(stream_seed: int, index: np.ndarray) -> np.ndarray:
    """Output j of SplitMix64 from state stream_seed for every j in index (uint64 array).

    Output j is mix64(stream_seed + (j + 1) * GOLDEN_GAMMA), so any element is computable alone.
    """
    stream_seed = _check_u64(stream_seed, "stream_seed")
    # In place on two buffers: each step is one pass over memory with no new allocation.
    z = np.add(np.asarray(index, dtype=np.uint64), np.uint64(1), dtype=np.uint64)
    z *= np.uint64(GOLDEN_GAMMA)
    z += np.uint64(stream_seed)
    t = np.right_shift(z, np.uint64(30))
    z ^= t
    z *= np.uint64(_MIX1)
    np.right_shift(z, np.uint64(27), out=t)
    z ^= t
    z *= np.uint64(_MIX2)
    np.right_shift(z, np.uint64(31), out=t)
    z ^= t
    return z


def mulhi(u: np.ndarray, n: int) -> np.ndarray:
    """High 64 bits of u * n for uint64 u and 0 < n <= 2^64: maps u uniformly onto [0, n)."""
    n = int(n)
    if n == 1 << 64:
        return u.astype(np.uint64, copy=True)
    if not 0 < n < 1 << 64:
        raise ValueError(f"mulhi needs 0 < n <= 2^64, got {n}")
    lo32 = np.uint64(0xFFFFFFFF)
    shift = np.uint64(32)
    n_lo = np.uint64(n & 0xFFFFFFFF)
    n_hi = np.uint64(n >> 32)
    # Schoolbook 64x64 -> high 64 bits from four 32x32 products, reusing buffers in place.
    u_lo = u & lo32
    u_hi = u >> shift
    ll = u_lo * n_lo
    ll >>= shift
    hl = u_hi * n_lo
    lh = u_lo
    lh *= n_hi
    hh = u_hi
    hh *= n_hi
    mid = lh & lo32
    mid += ll
    np.bitwise_and(hl, lo32, out=ll)
    mid += ll
    mid >>= shift
    lh >>= shift
    hl >>= shift
    hh += lh
    hh += hl
    hh += mid
    return hh
