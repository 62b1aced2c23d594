# Client-side fuzz generators of the python-api seed: shapes, dtypes and layouts (seeded or not),
# random tensors, and SeededFuzzer, which makes reproducible cases and runs an op on them.
"""fuzz_shapes/_dtypes/_layouts (+ _seeded), generate_random_tensor, with_layout, SeededFuzzer."""

from __future__ import annotations

import itertools
import time
from typing import Callable, Iterator, Sequence

import numpy as np

from gpuemu.compare import compare_output
from gpuemu.dtypes import DTYPE_NAMES, canonical_dtype, is_floating
from gpuemu.guard import run_guarded
from gpuemu.results import Failure, FuzzConfig, FuzzResults, ReproductionInfo, TestCase, ValidationResult
from gpuemu.rng import SeededRng, derive_seed, generate_seed
from gpuemu.tolerance import ToleranceConfig
from gpuemu.wire.tensors import contiguous_strides
from gpuemu.values import generate_tensor

__all__ = [
    "LAYOUTS",
    "choose_dim",
    "fuzz_shapes",
    "fuzz_shapes_seeded",
    "fuzz_dtypes",
    "fuzz_dtypes_seeded",
    "fuzz_layouts",
    "fuzz_layouts_seeded",
    "generate_random_tensor",
    "with_layout",
    "SeededFuzzer",
]

# The memory layouts gpuemu materialises (tensor::Layout order, whose numbers are persisted).
LAYOUTS = ("contiguous", "transposed", "strided")

# Elements of padding after every row of a strided layout (tensor::with_layout's default pad).
_ROW_PAD = 3

# Primes spread over the sizes kernels meet (as src/fuzz/case.cpp); tile bugs hide at sizes coprime
# with the block size.
_PRIMES = (2, 3, 5, 7, 13, 17, 31, 61, 97, 127, 193, 251, 509, 1021, 2039, 4093)


def choose_dim(rng: SeededRng, lo: int, hi: int) -> int:
    """Boundary-aware size in [lo, hi], draw for draw the same as fuzz::choose_dim in C++."""
    if hi <= lo:
        return lo
    if rng.gen_range(0, 10) >= 6:  # 40% uniform over the range, 60% from the boundary set
        return lo + rng.gen_range(0, hi - lo + 1)
    special = {lo, hi}
    if lo <= 1 <= hi:
        special.add(1)
    p = 2
    while p <= hi:
        special.update(v for v in (p - 1, p, p + 1) if lo <= v <= hi)
        p *= 2
    special.update(v for v in _PRIMES if lo <= v <= hi)
    ordered = sorted(special)
    return ordered[rng.gen_range(0, len(ordered))]


def _limited(gen: Iterator, count: int | None) -> Iterator:
    return gen if count is None else itertools.islice(gen, int(count))


def _shape(rng: SeededRng, min_dims: int, max_dims: int, min_size: int, max_size: int) -> tuple[int, ...]:
    ndim = rng.gen_range(min_dims, max_dims + 1)
    dims = []
    budget = max_size
    for k in range(ndim):
        # Leave room for the dims still to come at their minimum size.
        cap = budget // (min_size ** (ndim - k - 1))
        dim = choose_dim(rng, min_size, max(min_size, min(max_size, cap)))
        dims.append(dim)
        budget = max(1, budget // dim)
    return tuple(dims)


def fuzz_shapes_seeded(seed: int, min_dims: int = 1, max_dims: int = 4, min_size: int = 1, max_size: int = 1024,
                       count: int | None = None) -> Iterator[tuple[int, ...]]:
    """Shapes with min_dims..max_dims dims, each in [min_size, max_size], boundary-aware sizes.

    Dims are drawn left to right and each is capped so the element count stays <= max_size while
    min_size ** ndim <= max_size. Infinite unless count is given; the same seed gives the same shapes.
    """
    if not 0 <= min_dims <= max_dims:
        raise ValueError(f"fuzz_shapes needs 0 <= min_dims <= max_dims, got {min_dims}, {max_dims}")
    if not 1 <= min_size <= max_size:
        raise ValueError(f"fuzz_shapes needs 1 <= min_size <= max_size, got {min_size}, {max_size}")
    rng = SeededRng(derive_seed(seed, "fuzz/shapes"))

    def gen():
        while True:
            yield _shape(rng, min_dims, max_dims, min_size, max_size)

    return _limited(gen(), count)


def fuzz_shapes(min_dims: int = 1, max_dims: int = 4, min_size: int = 1, max_size: int = 1024,
                count: int | None = None) -> Iterator[tuple[int, ...]]:
    """fuzz_shapes_seeded with a fresh seed from system entropy."""
    return fuzz_shapes_seeded(generate_seed(), min_dims, max_dims, min_size, max_size, count)


def _dtype_pool(include: Sequence[str] | None, exclude: Sequence[str] | None) -> list[str]:
    pool = [canonical_dtype(d) for d in include] if include else list(DTYPE_NAMES)
    dropped = {canonical_dtype(d) for d in exclude or ()}
    pool = [d for d in dict.fromkeys(pool) if d not in dropped]
    if not pool:
        raise ValueError(f"no dtype left after include={include!r} and exclude={exclude!r}")
    return pool


def fuzz_dtypes_seeded(seed: int, include: Sequence[str] | None = None, exclude: Sequence[str] | None = None,
                       count: int | None = None) -> Iterator[str]:
    """Dtype names drawn uniformly from include (default: every gpuemu dtype) minus exclude."""
    pool = _dtype_pool(include, exclude)
    rng = SeededRng(derive_seed(seed, "fuzz/dtypes"))
    return _limited((rng.choice(pool) for _ in itertools.count()), count)


def fuzz_dtypes(include: Sequence[str] | None = None, exclude: Sequence[str] | None = None,
                count: int | None = None) -> Iterator[str]:
    return fuzz_dtypes_seeded(generate_seed(), include, exclude, count)


def _layout_pool(include: Sequence[str] | None) -> list[str]:
    pool = list(include) if include else list(LAYOUTS)
    unknown = [name for name in pool if name not in LAYOUTS]
    if unknown or not pool:
        raise ValueError(f"unknown layout(s) {unknown or pool}; gpuemu materialises {', '.join(LAYOUTS)}")
    return pool


def fuzz_layouts_seeded(seed: int, include: Sequence[str] | None = None, count: int | None = None) -> Iterator[str]:
    """Layout names (contiguous, transposed, strided) drawn uniformly from include (default: all)."""
    pool = _layout_pool(include)
    rng = SeededRng(derive_seed(seed, "fuzz/layouts"))
    return _limited((rng.choice(pool) for _ in itertools.count()), count)


def fuzz_layouts(include: Sequence[str] | None = None, count: int | None = None) -> Iterator[str]:
    return fuzz_layouts_seeded(generate_seed(), include, count)


def generate_random_tensor(seed: int, shape: tuple[int, ...], dtype: str = "float32",
                           domain: tuple[float, float] = (-1.0, 1.0), distribution: str = "regular") -> np.ndarray:
    """A tensor of gpuemu's value generator (docs/rng.md section 4): the same bits as the C++ side.

    distribution: regular (default), boundary, adversarial or mixed. bfloat16 returns float32 holding
    exact bfloat16 values.
    """
    return generate_tensor(seed, dtype, tuple(int(d) for d in shape), domain, distribution)


def with_layout(arr: np.ndarray, layout: str) -> np.ndarray:
    """The same logical values stored in the given layout (a real strided view, like tensor::with_layout).

    transposed: the last two dims stored column-major. strided: every row padded by three elements
    (rank 1: every other slot), as the C++ side; the padding holds NaN (floats) or the dtype's maximum.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; use one of {', '.join(LAYOUTS)}")
    a = np.asarray(arr)
    if layout == "contiguous" or a.ndim == 0 or (layout == "transposed" and a.ndim < 2):
        return np.ascontiguousarray(a)
    # Strides are set explicitly (numpy would normalise those of size-1 dims) so they equal the C++ ones.
    strides = contiguous_strides(a.shape)
    if layout == "transposed":
        rows = a.shape[-2]
        flat = np.ascontiguousarray(np.swapaxes(a, -1, -2)).reshape(-1)
        strides[-2], strides[-1] = 1, rows
        return np.lib.stride_tricks.as_strided(flat, a.shape, [s * a.itemsize for s in strides])
    poison = np.nan if a.dtype.kind == "f" else (True if a.dtype.kind == "b" else np.iinfo(a.dtype).max)
    if a.ndim == 1:
        buf = np.full(2 * a.shape[0], poison, dtype=a.dtype)
        buf[::2] = a
        return np.lib.stride_tricks.as_strided(buf, a.shape, (2 * a.itemsize,))
    cols = a.shape[-1]
    buf = np.full(a.shape[:-1] + (cols + _ROW_PAD,), poison, dtype=a.dtype)
    buf[..., :cols] = a
    step = cols + _ROW_PAD
    for k in range(a.ndim - 2, -1, -1):
        strides[k] = step
        step *= a.shape[k]
    return np.lib.stride_tricks.as_strided(buf.reshape(-1), a.shape, [s * a.itemsize for s in strides])


class SeededFuzzer:
    """Reproducible cases from one seed: case i has seed derive_seed(seed, "case/i") and depends on nothing else."""

    def __init__(self, seed: int, config: FuzzConfig | None = None, input_names: Sequence[str] = ("x",),
                 domain: tuple[float, float] = (-1.0, 1.0)):
        self.seed = int(seed)
        self.config = config or FuzzConfig(seed=self.seed)
        if not input_names:
            raise ValueError("SeededFuzzer needs at least one input name")
        self.input_names = list(input_names)
        self.domain = domain
        self.index = 0
        _layout_pool(self.config.layouts)
        self._dtypes = _dtype_pool(self.config.dtypes, None)

    def case(self, index: int) -> TestCase:
        """Case number index (random access: the same as the index-th next_test_case())."""
        case_seed = derive_seed(self.seed, f"case/{index}")
        rng = SeededRng(derive_seed(case_seed, "params"))
        dtype = rng.choice(self._dtypes)
        layout = rng.choice(self.config.layouts)
        c = self.config
        shape = _shape(SeededRng(derive_seed(case_seed, "dims")), c.min_dims, c.max_dims, c.min_size, c.max_size)
        inputs = {
            name: with_layout(generate_tensor(derive_seed(case_seed, f"input/{name}"), dtype, shape, self.domain,
                                              "regular"), layout)
            for name in self.input_names
        }
        return TestCase(seed=case_seed, shape=shape, dtype=dtype, layout=layout, inputs=inputs)

    def next_test_case(self) -> TestCase:
        case = self.case(self.index)
        self.index += 1
        return case

    def __iter__(self) -> Iterator[TestCase]:
        for _ in range(self.config.iterations):
            yield self.next_test_case()

    def run(self, op_fn: Callable, ref_fn: Callable | None = None, tolerance: ToleranceConfig | None = None,
            fail_fast: bool = False, op_name: str = "") -> FuzzResults:
        """Run op_fn(inputs_dict) on config.iterations cases; compare with ref_fn(inputs_dict) when given.

        Without a reference a case fails when op_fn raises, mutates or aliases an input, or returns
        NaN/Inf for finite inputs. Tolerance defaults to ToleranceConfig.for_dtype(case dtype).
        """
        start = time.perf_counter()
        results = FuzzResults(seed=self.seed, op_name=op_name or getattr(op_fn, "__name__", "op"))
        for case in self:
            result = self._check(case, op_fn, ref_fn, tolerance, results.op_name)
            results.add(result)
            if fail_fast and not result.passed:
                break
        results.duration_ms = int((time.perf_counter() - start) * 1000)
        return results

    def _check(self, case: TestCase, op_fn, ref_fn, tolerance, op_name: str) -> ValidationResult:
        run = run_guarded(op_fn, case.inputs)
        result = ValidationResult(passed=False, seed=case.seed, op_name=op_name, dtype=case.dtype,
                                  duration_ms=run.duration_ms, repro_info=self._repro(case))
        if run.kind != "none":
            result.kind = run.kind
            result.failures = [Failure(run.message, run.kind)]
            return result
        tol = tolerance or ToleranceConfig.for_dtype(case.dtype)
        if ref_fn is not None:
            verdict = compare_output(run.output, ref_fn({k: np.array(v) for k, v in case.inputs.items()}), tol)
        else:
            out = np.asarray(run.output, dtype=np.float64) if is_floating(case.dtype) else None
            bad = out is not None and not np.isfinite(out).all()
            verdict = compare_output(run.output, run.output, tol)
            if bad:
                verdict.kind, verdict.message = "unexpected_nonfinite", "output has NaN/Inf for finite inputs"
        result.passed = verdict.passed
        result.kind = verdict.kind
        result.max_diff, result.max_rel_diff = verdict.max_abs, verdict.max_rel
        result.mismatches, result.tolerance_used = verdict.mismatches, verdict.tolerance_used
        result.failures = [] if verdict.passed else [Failure(verdict.message, verdict.kind)]
        return result

    def _repro(self, case: TestCase) -> ReproductionInfo:
        first = case.inputs[self.input_names[0]]
        strides = tuple(s // first.itemsize for s in first.strides)
        from gpuemu.repro import input_snapshot

        return ReproductionInfo(seed=case.seed, shape=case.shape, strides=strides, dtype=case.dtype,
                                layout=case.layout, fuzz_config=self.config, input_snapshot=input_snapshot(case.inputs))
