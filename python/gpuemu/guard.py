# Runs an op under test on the client and catches kernels that cheat: an op that writes into its
# inputs, or returns a view of an input, would make the comparison meaningless (issue 8).
"""run_guarded(run_op, inputs) -> GuardedRun: output plus input_mutated / output_aliased / op_error."""

from __future__ import annotations

import hashlib
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

__all__ = ["GuardedRun", "run_guarded", "digest_inputs"]


@dataclass
class GuardedRun:
    output: Any = None
    kind: str = "none"  # none, op_error, input_mutated, output_aliased
    message: str = ""
    duration_ms: int = 0


def _digest(arr: np.ndarray) -> bytes:
    a = np.asarray(arr)
    h = hashlib.blake2b(digest_size=16)
    h.update(repr((a.dtype.str, a.shape)).encode())
    # The logical values in row-major order: a layout change alone is not a mutation.
    h.update(np.ascontiguousarray(a).tobytes())
    return h.digest()


def digest_inputs(inputs: dict) -> dict[str, bytes]:
    return {name: _digest(arr) for name, arr in inputs.items()}


def _shares_memory(a: Any, b: np.ndarray) -> bool:
    return isinstance(a, np.ndarray) and a.size > 0 and b.size > 0 and np.shares_memory(a, b)


def run_guarded(run_op: Callable[[dict], Any], inputs: dict[str, np.ndarray]) -> GuardedRun:
    """Call run_op(inputs); hash every input before and after, and check the output's memory."""
    arrays = dict(inputs)  # the op may rebind keys of the dict; the arrays are what must not change
    before = digest_inputs(arrays)
    start = time.perf_counter()
    try:
        output = run_op(inputs)
    except Exception as exc:  # the op under test may raise anything; it is a result, not a crash
        tb = traceback.format_exc(limit=-3)
        return GuardedRun(None, "op_error", f"run_op raised {type(exc).__name__}: {exc}\n{tb}".rstrip(),
                          int((time.perf_counter() - start) * 1000))
    took = int((time.perf_counter() - start) * 1000)
    after = digest_inputs(arrays)
    mutated = [name for name in arrays if before[name] != after[name]]
    if mutated:
        return GuardedRun(output, "input_mutated", f"run_op wrote into its input(s) {', '.join(mutated)}; an op "
                                                    "must leave its inputs unchanged (copy before writing)", took)
    aliased = [name for name, arr in arrays.items() if _shares_memory(output, arr)]
    if aliased:
        return GuardedRun(output, "output_aliased", f"run_op returned an output that shares memory with input(s) "
                                                     f"{', '.join(aliased)}; return a new array", took)
    if output is None:
        return GuardedRun(None, "op_error", "run_op returned None; return the output tensor", took)
    return GuardedRun(output, "none", "", took)
