# Tensor value generation, byte-identical with src/rng/values.cpp: the regular, boundary and
# adversarial distributions inside a domain, counter-based so numpy fills every element at once.
"""generate_tensor(seed, dtype, shape, domain, distribution) -> numpy array (spec: docs/rng.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from gpuemu._internal.core.dtypes import canonical_dtype, float_info, int_range, is_floating, round_to_dtype, to_bf16_bits
from gpuemu._internal.core.rng import MASK64, SeededRng, counter_at, derive_seed, mulhi

__all__ = ["DISTRIBUTIONS", "FLOAT_PATTERNS", "INT_PATTERNS", "generate_tensor", "describe_values", "resolve_domain"]

# Index = rng::ValueDistribution number (persisted with failures).
DISTRIBUTIONS = ("mixed", "regular", "boundary", "adversarial")
FLOAT_PATTERNS = (
    "dynamic_range", "huge_logits", "near_cancellation", "ties", "zero_rows", "one_hot", "alternating_signs",
)  # fmt: skip
INT_PATTERNS = ("extremes", "ties", "zero_rows", "one_hot")

_U11 = np.uint64(11)
_U32 = np.uint64(32)
_U63 = np.uint64(63)
_LO32 = np.uint64(0xFFFFFFFF)
_SCALES = np.array([2.0**k for k in range(9)])  # regular values on domain "any": bell * 2^(0..8)


@dataclass
class _Plan:
    """The per-tensor choices, drawn in a fixed order from SeededRng(derive_seed(seed, "values/tensor"))."""

    distribution: str
    detail: str = ""  # regular mode or adversarial pattern
    pool: list = field(default_factory=list)  # ties: float64 values or ints


def resolve_domain(dtype: str, domain) -> tuple:
    """(lo, hi, any): the smallest and largest dtype values inside the domain (ints for int dtypes).

    Infinite ends are clamped to the dtype's finite range. ValueError for NaN ends, lo > hi, or a
    domain that holds no value of the dtype.
    """
    dtype = canonical_dtype(dtype)
    any_domain = isinstance(domain, str)
    if any_domain and domain != "any":
        raise ValueError(f'domain must be "any" or a pair [lo, hi], got {domain!r}')
    if not any_domain:
        try:
            lo, hi = (float(v) for v in domain)
        except (TypeError, ValueError):
            raise ValueError(f'domain must be "any" or a pair [lo, hi] of numbers, got {domain!r}') from None
        if math.isnan(lo) or math.isnan(hi) or lo > hi:
            raise ValueError(f"domain [{lo}, {hi}] is empty or NaN; write it as [lo, hi] with lo <= hi")
    if dtype == "bool":
        return 0, 1, any_domain
    if not is_floating(dtype):
        tmin, tmax = int_range(dtype)
        if any_domain:
            return tmin, tmax, True
        ilo = tmin if lo <= tmin else math.ceil(lo)
        ihi = tmax if hi >= tmax else math.floor(hi)
        ilo, ihi = max(ilo, tmin), min(ihi, tmax)
        if ilo > ihi:
            raise ValueError(f"domain [{lo}, {hi}] holds no {dtype} value; widen it or use a float dtype")
        return ilo, ihi, False
    big = float_info(dtype).max_finite
    if any_domain:
        return -big, big, True
    clo, chi = max(lo, -big), min(hi, big)
    if clo <= chi:
        rlo = _round1(clo, dtype)
        if rlo < clo:
            rlo = _step(rlo, dtype, up=True)
        rhi = _round1(chi, dtype)
        if rhi > chi:
            rhi = _step(rhi, dtype, up=False)
        if rlo <= rhi:
            return rlo, rhi, False
    raise ValueError(f"domain [{lo}, {hi}] holds no {dtype} value; widen it or use a wider dtype")


def _round1(v: float, dtype: str) -> float:
    return float(round_to_dtype(np.array([v]), dtype)[0])


def _step(v: float, dtype: str, up: bool) -> float:
    """The dtype's next value above (up) or below v, for v representable in dtype."""
    if dtype == "float64":
        return float(np.nextafter(v, math.inf if up else -math.inf))
    if dtype in ("float32", "float16"):
        t = np.float32 if dtype == "float32" else np.float16
        return float(np.nextafter(t(v), t(math.inf if up else -math.inf)))
    bits = int(to_bf16_bits(np.array([v]))[0])
    if bits == 0x8000:
        bits = 0
    toward_larger_magnitude = up != bool(bits & 0x8000)
    if bits == 0 and not up:
        bits = 0x8001
    else:
        bits = bits + 1 if toward_larger_magnitude else bits - 1
    return float((np.array([bits], dtype=np.uint32) << np.uint32(16)).view(np.float32)[0])


def _plan(seed: int, dtype: str, distribution: str, any_domain: bool) -> _Plan:
    rng = SeededRng(derive_seed(seed, "values/tensor"))
    if distribution == "mixed":
        distribution = ("regular", "boundary", "adversarial")[rng.gen_range(0, 3)]
    plan = _Plan(distribution)
    if dtype == "bool":
        return plan
    floating = is_floating(dtype)
    if distribution == "regular" and floating:
        plan.detail = "scaled_bell" if any_domain else ("uniform", "bell")[rng.gen_range(0, 2)]
    elif distribution == "adversarial":
        patterns = FLOAT_PATTERNS if floating else INT_PATTERNS
        plan.detail = patterns[rng.gen_range(0, len(patterns))]
        if plan.detail == "ties":
            k = rng.gen_range(1, 5)
            plan.pool = [rng.next_f64() if floating else rng.next_u64() for _ in range(k)]
    return plan


def describe_values(seed: int, dtype: str, distribution: str = "mixed", domain=(-1.0, 1.0)) -> str:
    """What generate_tensor draws for these arguments, e.g. "adversarial/ties" or "regular/bell"."""
    dtype = canonical_dtype(dtype)
    _, _, any_domain = resolve_domain(dtype, domain)
    plan = _plan(seed, dtype, _check_distribution(distribution), any_domain)
    return plan.distribution + ("/" + plan.detail if plan.detail else "")


def _check_distribution(name: str) -> str:
    if name not in DISTRIBUTIONS:
        raise ValueError(f"unknown value distribution {name!r}; use one of {', '.join(DISTRIBUTIONS)}")
    return name


class _Lanes:
    """Counter-based per-element streams a, b, c, d (index i) and r (row index)."""

    def __init__(self, seed: int, n: int, row_len: int):
        self.seeds = {name: derive_seed(seed, "values/" + name) for name in ("a", "b", "c", "d", "row")}
        self.idx = np.arange(n, dtype=np.uint64)
        self.row_len = row_len

    def u(self, name: str, idx: np.ndarray) -> np.ndarray:
        return counter_at(self.seeds[name], idx)

    def row(self, idx: np.ndarray) -> np.ndarray:
        return counter_at(self.seeds["row"], idx // np.uint64(self.row_len))


def _uni(lanes: _Lanes, idx: np.ndarray) -> np.ndarray:
    # Through int64 (exact: < 2^53): numpy's uint64 -> float64 cast is several times slower.
    return (lanes.u("c", idx) >> _U11).view(np.int64).astype(np.float64) * 2.0**-53


def _bell(lanes: _Lanes, idx: np.ndarray) -> np.ndarray:
    a = lanes.u("a", idx)
    b = lanes.u("b", idx)
    total = (a >> _U32) + (a & _LO32) + (b >> _U32) + (b & _LO32)
    return total.view(np.int64).astype(np.float64) * 2.0**-33 - 1.0


def _base(lanes: _Lanes, idx: np.ndarray, lo: float, hi: float, any_domain: bool) -> np.ndarray:
    if any_domain:
        return _bell(lanes, idx) * _SCALES[mulhi(lanes.u("d", idx), 9)]
    mid = 0.5 * lo + 0.5 * hi
    half = 0.5 * hi - 0.5 * lo
    return mid + _bell(lanes, idx) * half


def _clamp(x: np.ndarray, lo, hi) -> np.ndarray:
    # Not np.clip: min/max disagree across libraries on -0.0; this keeps x unless it is outside.
    return np.where(x < lo, lo, np.where(x > hi, hi, x))


def _exponent(v: float) -> int:
    return math.frexp(v)[1] - 1  # floor(log2(v)) for v > 0


def _float_boundary(dtype: str, lo: float, hi: float) -> list[list[float]]:
    info = float_info(dtype)
    mn, ms, mx = info.min_normal, info.min_subnormal, info.max_finite
    zeros = ([0.0] if lo <= 0.0 <= hi else []) + ([-0.0] if lo < 0.0 <= hi else [])
    powers = [v for k in range(-16, 17) for v in (2.0**k, -(2.0**k))]
    ends = [lo, hi, min(_step(lo, dtype, up=True), hi), max(_step(hi, dtype, up=False), lo)]
    groups = [[1.0, -1.0], [mn, -mn], [ms, -ms, mn - ms, -(mn - ms), mn / 2, -mn / 2], [mx, -mx], powers]
    cats = [zeros] + [[v for v in g if lo <= v <= hi] for g in groups] + [ends]
    return [c for c in cats if c]


def _float_values(plan: _Plan, lanes: _Lanes, dtype: str, lo: float, hi: float, any_domain: bool) -> np.ndarray:
    idx = lanes.idx
    kind, detail = plan.distribution, plan.detail
    if kind == "regular":
        if detail == "uniform":
            uni = _uni(lanes, idx)
            return lo * (1.0 - uni) + hi * uni
        return _base(lanes, idx, lo, hi, any_domain)
    if kind == "boundary":
        cats = _float_boundary(dtype, lo, hi)
        flat = np.array([v for c in cats for v in c], dtype=np.float64)
        sizes = np.array([len(c) for c in cats], dtype=np.uint64)
        offsets = np.cumsum(np.concatenate([[0], sizes[:-1]])).astype(np.uint64)
        cat = mulhi(lanes.u("a", idx), len(cats))
        member = _mulhi_var(lanes.u("b", idx), sizes[cat])
        return flat[offsets[cat] + member]
    a_half = 0.5 * hi - 0.5 * lo
    if detail == "dynamic_range":
        amax = max(abs(lo), abs(hi))
        amin = 0.0 if lo <= 0.0 <= hi else min(abs(lo), abs(hi))
        e_lo = _exponent(amin) if amin > 0 else _exponent(float_info(dtype).min_subnormal)
        e_hi = _exponent(amax) if amax > 0 else e_lo
        e = mulhi(lanes.u("d", idx), e_hi - e_lo + 1).astype(np.int64) + e_lo
        mag = (1.0 + _uni(lanes, idx)) * np.ldexp(1.0, e.astype(np.int32))
        if lo >= 0.0:
            return mag
        if hi <= 0.0:
            return -mag
        return np.where((lanes.u("b", idx) >> _U63) == 1, -mag, mag)
    if detail == "huge_logits":
        uni = _uni(lanes, idx)
        spike = np.where((lanes.u("b", idx) >> _U63) == 0, hi - a_half * uni * 0.0625, lo + a_half * uni * 0.0625)
        return np.where(mulhi(lanes.u("d", idx), 8) == 0, spike, _base(lanes, idx, lo, hi, any_domain))
    if detail == "near_cancellation":
        v = _base(lanes, idx >> np.uint64(1), lo, hi, any_domain)
        eps = 2.0 ** -float_info(dtype).mantissa_bits
        w = -v + v * eps
        w = np.where((w < lo) | (w > hi), v - v * eps, w)
        return np.where((idx & np.uint64(1)) == 1, w, v)
    if detail == "ties":
        pool = np.array([lo * (1.0 - f) + hi * f for f in plan.pool], dtype=np.float64)
        return pool[mulhi(lanes.u("a", idx), len(pool))]
    zero = float(_clamp(np.float64(0.0), lo, hi))
    if detail == "zero_rows":
        return np.where((lanes.row(idx) >> _U63) == 1, zero, _base(lanes, idx, lo, hi, any_domain))
    if detail == "one_hot":
        spike = hi if hi != zero else lo
        pos = mulhi(lanes.row(idx), lanes.row_len)
        return np.where(idx % np.uint64(lanes.row_len) == pos, spike, zero)
    if detail == "alternating_signs":
        m = np.abs(_base(lanes, idx, lo, hi, any_domain))
        return np.where((idx & np.uint64(1)) == 0, m, -m)
    raise AssertionError(f"unhandled adversarial pattern {detail}")


def _mulhi_var(u: np.ndarray, n: np.ndarray) -> np.ndarray:
    """mulhi with a per-element n < 2^32 (category sizes): exact with 32-bit limbs."""
    hi = (u >> _U32) * n
    lo = (u & _LO32) * n
    return (hi + (lo >> _U32)) >> _U32


def _int_values(plan: _Plan, lanes: _Lanes, ilo: int, ihi: int) -> np.ndarray:
    idx = lanes.idx
    n = ihi - ilo + 1
    base = np.uint64(ilo & MASK64)

    def uniform(u: np.ndarray) -> np.ndarray:
        return (base + mulhi(u, n)).view(np.int64)

    def const(v: int) -> np.ndarray:
        return np.full(idx.shape, v, dtype=np.int64)

    kind, detail = plan.distribution, plan.detail
    if kind == "regular":
        return uniform(lanes.u("a", idx))
    if kind == "boundary":
        cands = [ilo, ilo + 1, ihi - 1, ihi, -1, 0, 1] + [v for k in range(1, 63) for v in (2**k, -(2**k))]
        cands = np.array([v for v in cands if ilo <= v <= ihi], dtype=np.int64)
        return cands[mulhi(lanes.u("a", idx), len(cands))]
    zero = min(max(0, ilo), ihi)
    if detail == "extremes":
        pick = mulhi(lanes.u("b", idx), 4)
        return np.where(pick == 0, ilo, np.where(pick == 1, ihi, uniform(lanes.u("a", idx))))
    if detail == "ties":
        pool = np.array([ilo + ((u * n) >> 64) for u in plan.pool], dtype=np.int64)
        return pool[mulhi(lanes.u("a", idx), len(pool))]
    if detail == "zero_rows":
        return np.where((lanes.row(idx) >> _U63) == 1, const(zero), uniform(lanes.u("a", idx)))
    if detail == "one_hot":
        spike = ihi if ihi != zero else ilo
        pos = mulhi(lanes.row(idx), lanes.row_len)
        return np.where(idx % np.uint64(lanes.row_len) == pos, const(spike), const(zero))
    raise AssertionError(f"unhandled integer pattern {detail}")


def generate_tensor(seed: int, dtype: str, shape, domain=(-1.0, 1.0), distribution: str = "mixed") -> np.ndarray:
    """A C-contiguous array of `shape` filled from `seed`; same bytes as C++ rng::generate_tensor.

    The array has numpy_dtype(dtype) (bfloat16: float32 holding exact bfloat16 values). domain is
    (lo, hi) or "any" (every finite value of the dtype); ignored for bool.
    """
    dtype = canonical_dtype(dtype)
    distribution = _check_distribution(distribution)
    dims = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    if any(d < 0 for d in dims):
        raise ValueError(f"shape {list(dims)} has a negative dimension")
    lo, hi, any_domain = resolve_domain(dtype, domain)
    plan = _plan(seed, dtype, distribution, any_domain)
    n = math.prod(dims)
    lanes = _Lanes(seed, n, dims[-1] if dims and dims[-1] > 0 else 1)
    if dtype == "bool":
        return ((lanes.u("a", lanes.idx) >> _U63) == 1).reshape(dims)
    if not is_floating(dtype):
        return _int_values(plan, lanes, lo, hi).astype(np.dtype(dtype)).reshape(dims)
    with np.errstate(over="raise", invalid="raise"):
        values = _clamp(_float_values(plan, lanes, dtype, lo, hi, any_domain), lo, hi)
    return round_to_dtype(values, dtype).reshape(dims)
