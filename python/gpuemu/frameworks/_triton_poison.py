# The values the Triton sanitizer (_triton_sanitizer.py) puts where a GPU would leave memory undefined:
# masked-off lanes of a load without other=, and the tensors an op allocates with torch.empty & co.
"""Poison values, seeded by the case so a replay sees the same ones (docs/frameworks.md, "The sanitizer").

Masked-off load lanes get large finite values of both signs and of different sizes rather than NaN:
the interpreter's ``tl.max``/``tl.min`` drop NaN (numpy's fmax), so a NaN poison would leave a row max
over dead lanes right and the bug unseen. A value far above any input of its dtype changes a
``tl.max`` (the positive ones), a ``tl.min`` (the negative ones) and a ``tl.sum`` (their sizes differ,
so they do not cancel), while staying finite keeps ``0 * poison`` at 0 for a kernel that multiplies
dead lanes by a zero mask. One run, no second pass: the sanitizer must stay within 1.5x of the bare
interpreter. Memory from ``torch.empty`` is NaN (floats) or a seeded pattern (integers): an element no
program writes then shows up in the comparison.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["POISON_LANES", "dead_lanes_note", "lane_poison", "fill_empty"]

# Loads a dead-lanes note names; a case that poisons more says how many more.
NOTE_SITES = 3

# The pattern's length; a block with more dead lanes repeats it (its sizes still differ within it).
POISON_LANES = 1024

# (smallest, largest) magnitude as powers of two, per floating dtype: far above any value a case's
# inputs take (gpuemu's domains stay within a few thousand), yet finite when doubled or summed a
# few times, so one dead lane cannot turn a sum into inf - inf = NaN on its own.
_FLOAT_EXPONENTS = {
    np.dtype(np.float16): (11, 13),
    np.dtype(np.float32): (40, 44),
    np.dtype(np.float64): (60, 64),
}


def _rng(seed: int | None, salt: int) -> np.random.Generator:
    return np.random.default_rng([(seed or 0) & 0xFFFF_FFFF_FFFF_FFFF, salt])


def _signs(rng: np.random.Generator, n: int) -> np.ndarray:
    """+1/-1 per lane, alternating from a seeded start, so any two neighbouring dead lanes hold one
    value of each sign (a max and a min over them both move)."""
    start = 1 if rng.integers(0, 2) else -1
    return start * np.where(np.arange(n) % 2 == 0, 1, -1)


def lane_poison(type_name: str, np_dtype: np.dtype, seed: int | None) -> np.ndarray | None:
    """POISON_LANES values for dead load lanes of Triton type type_name ("fp32", "bf16", "int32", ...)
    held by the interpreter as np_dtype, or None for a type left as the interpreter has it (pointers,
    int1, fp8). The interpreter holds bfloat16 as uint16 bits, so "bf16" gets bfloat16 bit patterns.

    The case seed rotates a pattern drawn once per type and picks which sign comes first: a fresh
    generator per case cost more than the rest of a small kernel's sanitizing."""
    base = _base_pattern(type_name, np.dtype(np_dtype))
    if base is None:
        return None
    seed = (seed or 0) & 0xFFFF_FFFF_FFFF_FFFF
    pattern = np.roll(base, seed % POISON_LANES)
    if (seed // POISON_LANES) % 2:
        if type_name == "bf16":
            pattern = pattern ^ np.uint16(0x8000)
        elif pattern.dtype.kind != "u":
            pattern = -pattern
    return pattern


@functools.lru_cache(maxsize=None)
def _base_pattern(type_name: str, np_dtype: np.dtype) -> np.ndarray | None:
    if type_name.startswith("fp8") or np_dtype == np.dtype(bool):
        return None
    rng = _rng(0, 0x5A17 + np_dtype.num)
    signs = _signs(rng, POISON_LANES)
    if type_name == "bf16":
        lo, hi = _FLOAT_EXPONENTS[np.dtype(np.float32)]
        values = (signs * np.exp2(rng.uniform(lo, hi, POISON_LANES))).astype(np.float32)
        return (values.view(np.uint32) >> 16).astype(np.uint16)  # truncation keeps a bfloat16 value
    if np_dtype in _FLOAT_EXPONENTS:
        lo, hi = _FLOAT_EXPONENTS[np_dtype]
        return (signs * np.exp2(rng.uniform(lo, hi, POISON_LANES))).astype(np_dtype)
    if np_dtype.kind == "i":
        top = np.iinfo(np_dtype).max
        return (signs * rng.integers(top // 4, top // 2, POISON_LANES, dtype=np.int64)).astype(np_dtype)
    if np_dtype.kind == "u":
        top = np.iinfo(np_dtype).max
        return rng.integers(top // 4, top // 2, POISON_LANES, dtype=np.uint64).astype(np_dtype)
    return None


def dead_lanes_note(sites: list[str]) -> str:
    """The one-line note on a case's stderr when loads at sites ("file:line (kernel)", first load first)
    had masked-off lanes poisoned. A failing case's report shows its stderr's last line, which this is (the
    worker prints it once the op returns); a passing case's report has no stderr, so it never shows."""
    shown = ", ".join(sites[:NOTE_SITES]) + (f" and {len(sites) - NOTE_SITES} more" if len(sites) > NOTE_SITES else "")
    return (f"gpuemu sanitizer: note: this case loaded masked-off lanes of tl.load without other= at {shown}; "
            "those lanes are undefined (on a GPU too, where they often happen to read 0) and the sanitizer filled "
            "them with large values of both signs (2^40 and up in float32): if the output is wrong or not finite, "
            "the kernel uses them. Pass other= to tl.load, or mask the lanes before reducing them "
            "(docs/frameworks.md, \"The sanitizer\")")


def fill_empty(tensor, seed: int | None) -> None:
    """Overwrites a freshly allocated CPU torch tensor with NaN (floating dtypes) or a seeded byte
    pattern (every other dtype), in place."""
    if tensor.is_floating_point() or tensor.is_complex():
        tensor.fill_(float("nan"))
        return
    if str(tensor.dtype) == "torch.bool":
        tensor.fill_(True)  # a bool byte other than 0 or 1 is undefined in torch itself
        return
    raw = tensor.untyped_storage()
    pattern = _rng(seed, 0xE3).integers(1, 255, 64, dtype=np.uint8)
    nbytes = raw.nbytes()
    # lazy: torch is imported by the op's own module before any tensor reaches here
    import torch

    filler = torch.from_numpy(np.resize(pattern, nbytes))
    torch.tensor([], dtype=torch.uint8).set_(raw).copy_(filler)
