# The fuzz generators in Python: shapes of boundary-aware sizes (choose_dim of cases.py), dtypes and
# layouts (seeded or not) and random tensors, as docs/python-api.md "Fuzz generators" lists them.
"""draw_shape, fuzz_shapes/_dtypes/_layouts (+ _seeded), generate_random_tensor; choose_dim re-exported."""

from __future__ import annotations

import itertools
from typing import Iterator, Sequence

import numpy as np

from gpuemu._internal.core.dtypes import DTYPE_NAMES, canonical_dtype
from gpuemu._internal.core.fuzz.cases import choose_dim
from gpuemu._internal.core.layouts import LAYOUTS
from gpuemu._internal.core.rng import SeededRng, derive_seed, generate_seed
from gpuemu._internal.core.values import generate_tensor

__all__ = [
    "choose_dim",
    "draw_shape",
    "dtype_pool",
    "layout_pool",
    "fuzz_shapes",
    "fuzz_shapes_seeded",
    "fuzz_dtypes",
    "fuzz_dtypes_seeded",
    "fuzz_layouts",
    "fuzz_layouts_seeded",
    "generate_random_tensor",
]


def _limited(gen: Iterator, count: int | None) -> Iterator:
    return gen if count is None else itertools.islice(gen, int(count))


def draw_shape(rng: SeededRng, min_dims: int, max_dims: int, min_size: int, max_size: int) -> tuple[int, ...]:
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
            yield draw_shape(rng, min_dims, max_dims, min_size, max_size)

    return _limited(gen(), count)


def fuzz_shapes(min_dims: int = 1, max_dims: int = 4, min_size: int = 1, max_size: int = 1024,
                count: int | None = None) -> Iterator[tuple[int, ...]]:
    """fuzz_shapes_seeded with a fresh seed from system entropy."""
    return fuzz_shapes_seeded(generate_seed(), min_dims, max_dims, min_size, max_size, count)


def dtype_pool(include: Sequence[str] | None, exclude: Sequence[str] | None) -> list[str]:
    pool = [canonical_dtype(d) for d in include] if include else list(DTYPE_NAMES)
    dropped = {canonical_dtype(d) for d in exclude or ()}
    pool = [d for d in dict.fromkeys(pool) if d not in dropped]
    if not pool:
        raise ValueError(f"no dtype left after include={include!r} and exclude={exclude!r}")
    return pool


def fuzz_dtypes_seeded(seed: int, include: Sequence[str] | None = None, exclude: Sequence[str] | None = None,
                       count: int | None = None) -> Iterator[str]:
    """Dtype names drawn uniformly from include (default: every gpuemu dtype) minus exclude."""
    pool = dtype_pool(include, exclude)
    rng = SeededRng(derive_seed(seed, "fuzz/dtypes"))
    return _limited((rng.choice(pool) for _ in itertools.count()), count)


def fuzz_dtypes(include: Sequence[str] | None = None, exclude: Sequence[str] | None = None,
                count: int | None = None) -> Iterator[str]:
    return fuzz_dtypes_seeded(generate_seed(), include, exclude, count)


def layout_pool(include: Sequence[str] | None) -> list[str]:
    pool = list(include) if include else list(LAYOUTS)
    unknown = [name for name in pool if name not in LAYOUTS]
    if unknown or not pool:
        raise ValueError(f"unknown layout(s) {unknown or pool}; gpuemu materialises {', '.join(LAYOUTS)}")
    return pool


def fuzz_layouts_seeded(seed: int, include: Sequence[str] | None = None, count: int | None = None) -> Iterator[str]:
    """Layout names (contiguous, transposed, strided, channels_last) drawn uniformly from include (default: all)."""
    pool = layout_pool(include)
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
