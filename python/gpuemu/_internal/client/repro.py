# What replays a case the client held: ReproductionInfo with the strides the op really received, a
# base64 snapshot of the inputs, and the fuzz configuration the case came from (not defaults).
"""repro_for_case() and fuzz_config_for(): truthful ReproductionInfo for client-side cases."""

from __future__ import annotations

from typing import Any

import numpy as np

from gpuemu.results import FuzzConfig, ReproductionInfo
from gpuemu._internal.wire import tensors

__all__ = ["input_snapshot", "element_strides", "fuzz_config_for", "repro_for_case"]


def element_strides(arr: Any) -> tuple[int, ...]:
    """The strides of arr in elements (as the script protocol and the C++ side count them)."""
    a = np.asarray(arr)
    return tuple(int(s) // a.itemsize for s in a.strides) if a.itemsize else ()


def input_snapshot(inputs: dict[str, Any]) -> dict[str, dict]:
    """{name: {"shape", "strides", "dtype", "data"}}: the inputs' logical values, row-major and base64
    little-endian (the script protocol's tensor form), so the case replays byte for byte anywhere."""
    return {name: tensors.encode_tensor(np.asarray(arr)) for name, arr in inputs.items()}


def fuzz_config_for(op: Any, seed: int | None, iterations: int, dtypes: list[str] | None,
                    layouts: list[str] | None, shapes: dict[str, tuple] | None = None) -> FuzzConfig:
    """The configuration a fuzz run drew its cases from: its master seed and iteration count, the
    dtypes and layouts it drew from, and the rank and size bounds of the op's schema (or, without
    one, of the case's own shapes)."""
    dims = list(getattr(op, "dims", None) or [])
    ranks = [len(refs) for refs in (getattr(op, "schema_inputs", None) or {}).values()]
    if not ranks and shapes:
        ranks = [len(s) for s in shapes.values()]
    if dims:
        sizes = [int(v) for d in dims for v in ((d.lo, d.hi) if not d.candidates else d.candidates)]
    else:
        sizes = [int(v) for s in (shapes or {}).values() for v in s] or [1]
    config = FuzzConfig(iterations=int(iterations), seed=seed,
                        min_dims=min(ranks, default=1), max_dims=max(ranks, default=1),
                        min_size=max(1, min(sizes)), max_size=max(1, max(sizes)),
                        dtypes=list(dtypes or getattr(op, "dtypes", None) or ["float32"]),
                        layouts=list(layouts or getattr(op, "layouts", None) or ["contiguous"]))
    return config


def repro_for_case(case: dict[str, Any], fuzz_config: FuzzConfig | None, command: str = "") -> ReproductionInfo:
    """ReproductionInfo of a case dict (get_test_batch's form) as the op received it."""
    inputs = case["inputs"]
    first = next(iter(inputs.values()), None)
    return ReproductionInfo(seed=int(case["seed"]), shape=tuple(case.get("shape") or ()),
                            strides=element_strides(first) if first is not None else (),
                            dtype=str(case.get("dtype", "float32")), layout=str(case.get("layout", "contiguous")),
                            fuzz_config=fuzz_config if fuzz_config is not None else FuzzConfig(),
                            input_snapshot=input_snapshot(inputs), command=command)
