# Minimizing a failure whose op runs only on the client (client-side mode): the daemon cannot run
# the op, so the client shrinks the stored inputs itself, re-running run_op and the reference at
# every step, and stores the minimal case linked to the original (submit_output minimized_from).
"""minimize_client_side(client, seed, run_op, strategy, max_iters) -> MinimizeResult."""

from __future__ import annotations

from typing import Callable

import numpy as np

from gpuemu._internal.client.guard import run_guarded
from gpuemu._internal.core.rng import derive_seed
from gpuemu.results import MinimizeResult

__all__ = ["minimize_client_side", "axis_groups", "shrink"]


def axis_groups(spec, inputs: dict[str, np.ndarray]) -> list[list[tuple[str, int]]]:
    """Axes that must shrink together: one group per schema dim, else axis k of every input of that rank."""
    groups: dict[object, list[tuple[str, int]]] = {}
    for name, arr in inputs.items():
        refs = spec.schema_inputs.get(name) if spec is not None and spec.has_schema else None
        for axis in range(arr.ndim):
            if refs is not None and axis < len(refs):
                if isinstance(refs[axis], int):
                    continue  # a literal size is part of the op's contract
                key: object = refs[axis]
            else:
                key = (arr.ndim, axis)
            groups.setdefault(key, []).append((name, axis))
    return list(groups.values())


def _sizes_below(n: int) -> list[int]:
    sizes = {1, n // 2, n - 1}
    p = 2
    while p < n:
        sizes.add(p)
        p *= 2
    return sorted(s for s in sizes if 1 <= s < n)


def _cut(inputs: dict, group: list[tuple[str, int]], size: int, tail: bool) -> dict:
    out = dict(inputs)
    for name, axis in group:
        n = out[name].shape[axis]
        index = [slice(None)] * out[name].ndim
        index[axis] = slice(n - size, n) if tail else slice(0, size)
        out[name] = np.ascontiguousarray(out[name][tuple(index)])
    return out


class _Search:
    def __init__(self, fails: Callable[[dict], bool], max_iters: int):
        self.fails = fails
        self.left = max_iters
        self.steps = 0

    def accept(self, candidate: dict) -> bool:
        if self.left <= 0:
            return False
        self.left -= 1
        if self.fails(candidate):
            self.steps += 1
            return True
        return False

    def dims(self, inputs: dict, groups) -> dict:
        changed = True
        while changed and self.left > 0:
            changed = False
            for group in groups:
                n = inputs[group[0][0]].shape[group[0][1]]
                for size in _sizes_below(n):
                    for tail in (False, True):
                        candidate = _cut(inputs, group, size, tail)
                        if self.accept(candidate):
                            inputs, changed = candidate, True
                            break
                    if changed:
                        break
        return inputs

    def values(self, inputs: dict) -> dict:
        for name in list(inputs):
            flat_n = inputs[name].size
            chunk = flat_n // 2
            while chunk >= 1 and self.left > 0:
                for start in range(0, flat_n, chunk):
                    candidate = dict(inputs)
                    arr = np.array(inputs[name], copy=True)
                    arr.reshape(-1)[start:start + chunk] = 0
                    candidate[name] = arr
                    if self.accept(candidate):
                        inputs = candidate
                chunk //= 2
            if inputs[name].dtype.kind == "f":
                candidate = dict(inputs)
                candidate[name] = np.round(inputs[name]).astype(inputs[name].dtype)
                if self.accept(candidate):
                    inputs = candidate
        return inputs


def shrink(spec, inputs: dict, fails: Callable[[dict], bool], strategy: str, max_iters: int) -> tuple[dict, int]:
    """(smallest inputs found that still fail, accepted steps): dims first, then values, at most
    max_iters calls of fails(candidate). Also used by the pytest plugin (gpuemu.testing)."""
    search = _Search(fails, max_iters)
    if strategy in ("dims", "all"):
        inputs = search.dims(inputs, axis_groups(spec, inputs))
    if strategy in ("values", "all"):
        inputs = search.values(inputs)
    return inputs, search.steps


def minimize_client_side(client, seed: int, run_op: Callable, strategy: str, max_iters: int,
                         op: str | None = None) -> MinimizeResult:
    repro = client._reproduce(seed, op, None)  # the stored case only: run_op runs below, on each candidate
    original = repro.original or repro.result
    project = client._project()
    spec = project.op(original.op_name)

    def fails(candidate: dict) -> bool:
        run = run_guarded(run_op, {k: np.array(v) for k, v in candidate.items()})  # candidates stay pristine
        if run.kind != "none":
            return run.kind == original.kind
        result = project.validate(original.op_name, candidate, run.output, original.dtype, seed)
        return not result.passed and result.kind == original.kind

    inputs, steps = shrink(spec, dict(repro.inputs), fails, strategy, max_iters)
    run = run_guarded(run_op, {k: np.array(v) for k, v in inputs.items()})
    minimized_seed = derive_seed(seed, f"client-minimized/{steps}")
    extra = {"minimized_from": str(seed)}
    if run.kind != "none":
        extra["client_failure"] = {"kind": run.kind, "message": run.message}
    result = client._validate_request("submit_output", original.op_name, inputs, run.output, original.dtype,
                                      minimized_seed, {}, extra)
    first = next(iter(repro.inputs))
    return MinimizeResult(original_seed=seed, minimized_seed=minimized_seed, minimized_shape=tuple(inputs[first].shape),
                          result=result, inputs=inputs, original_shape=tuple(repro.inputs[first].shape),
                          steps=steps)
