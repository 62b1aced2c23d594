# Runs an op under test on the client and catches kernels that cheat: an op that writes into its
# inputs, or returns a view of one, makes the comparison meaningless (docs/python-api.md, input_mutated).
"""run_guarded(run_op, inputs, timeout) -> GuardedRun: output plus input_mutated / output_aliased / op_error."""

from __future__ import annotations

import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from gpuemu.errors import InputMutatedError
from gpuemu._internal.wire.input_guard import InputGuard

__all__ = ["GuardedRun", "run_guarded"]


@dataclass
class GuardedRun:
    output: Any = None
    kind: str = "none"  # none, op_error, input_mutated, output_aliased
    message: str = ""
    duration_ms: int = 0
    timed_out: bool = False  # run_op did not return within the timeout; it still runs in its thread


def _shares_memory(a: Any, b: np.ndarray) -> bool:
    return isinstance(a, np.ndarray) and a.size > 0 and b.size > 0 and np.shares_memory(a, b)


def _call(run_op: Callable[[dict], Any], inputs: dict, timeout: float | None) -> tuple[str, Any]:
    """("ok", output), ("raised", message) or ("timeout", None). With a timeout the call runs in a
    daemon thread: Python cannot stop a thread, so a call that never returns is abandoned there (it
    keeps whatever it holds, a GPU stream for instance, and does not keep the interpreter alive)."""
    def attempt() -> tuple[str, Any]:
        try:
            return "ok", run_op(inputs)
        except Exception as exc:  # the op under test may raise anything; it is a result, not a crash
            tb = traceback.format_exc(limit=-3)
            return "raised", f"run_op raised {type(exc).__name__}: {exc}\n{tb}".rstrip()

    if timeout is None:
        return attempt()
    box: list = []
    thread = threading.Thread(target=lambda: box.append(attempt()), name="gpuemu-run_op", daemon=True)
    thread.start()
    thread.join(timeout)
    return box[0] if box else ("timeout", None)


def run_guarded(run_op: Callable[[dict], Any], inputs: dict[str, np.ndarray],
                timeout: float | None = None) -> GuardedRun:
    """Call run_op(inputs); compare every input's elements after the call with a copy taken before it
    (naming the first changed index, as the worker does: gpuemu._internal.wire.input_guard), and check the
    output's memory.

    timeout (seconds): a call still running then is reported as op_error with timed_out set, as the
    script runner reports a timed-out script; the call itself is left running in a daemon thread."""
    arrays = dict(inputs)  # the op may rebind keys of the dict; the arrays are what must not change
    guard = InputGuard(who="run_op")
    for name, arr in arrays.items():
        guard.watch_array(str(name), np.asarray(arr))
    start = time.perf_counter()
    status, value = _call(run_op, inputs, timeout)
    took = int((time.perf_counter() - start) * 1000)
    if status == "timeout":
        return GuardedRun(None, "op_error", f"run_op timed out after {timeout:g} s (the op's timeout); the call was "
                                            "abandoned in a background thread, where it may still be running",
                          took, timed_out=True)
    if status == "raised":
        return GuardedRun(None, "op_error", value, took)
    output = value
    try:
        guard.check()
    except InputMutatedError as exc:
        return GuardedRun(output, "input_mutated", str(exc), took)
    aliased = [name for name, arr in arrays.items() if _shares_memory(output, arr)]
    if aliased:
        return GuardedRun(output, "output_aliased", f"run_op returned an output that shares memory with input(s) "
                                                     f"{', '.join(aliased)}; return a new array", took)
    if output is None:
        return GuardedRun(None, "op_error", "run_op returned None; return the output tensor", took)
    return GuardedRun(output, "none", "", took)
