# Kernels that exercise how batched Triton launches (gpuemu.frameworks._triton_batch) split, fall back and
# undo, run in a fresh process with every layer armed in the worker's order; prints one JSON line per scenario.
"""Usage: python triton_batch_scenarios.py   (test_triton_batched.py reads its output)"""
from __future__ import annotations

import json
import os
import sys
import time

os.environ["TRITON_INTERPRET"] = "1"
os.environ["GPUEMU_SANITIZE"] = "1"

from gpuemu.frameworks import triton_hook  # noqa: E402

triton_hook.arm()
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from gpuemu import frameworks  # noqa: E402
from gpuemu.frameworks import _triton_batch as triton_batch  # noqa: E402


def call(fn, inputs=None, seed=1):
    conv = frameworks.Converter(frameworks.AdapterSettings(framework="pytorch", device="cpu"))
    return conv.call(fn, inputs or {}, {}, "float32", seed)


@triton.jit
def count_then_branch(counter_ptr, y_ptr):
    pid = tl.program_id(0)
    tl.atomic_add(counter_ptr, 1)  # written before the branch: a split group must not count twice
    tl.store(y_ptr + pid, pid.to(tl.float32))
    if pid % 2 == 0:  # even programs
        tl.store(y_ptr + pid, -1.0)


@triton.jit
def loop_over_own_row(y_ptr):
    pid = tl.program_id(0)
    total = 0.0
    for i in range(pid):  # a loop bound from the program id
        total += 1.0
    tl.store(y_ptr + pid, total)


@triton.jit
def printing(y_ptr):
    pid = tl.program_id(0)
    tl.device_print("pid", pid)
    tl.store(y_ptr + pid, pid.to(tl.float32) * 2.0)


@triton.jit
def scatter_add(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.atomic_add(y_ptr + offs % 3, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def plus_one(x_ptr, y_ptr):
    pid = tl.program_id(0)
    tl.store(y_ptr + pid, tl.load(x_ptr + pid) + 1.0)


@triton.jit
def long_loop(y_ptr, n):
    total = 0.0
    for i in range(n):
        total += 1.0
        time.sleep(0.001)  # the interpreter runs the kernel as Python: a launch that takes a while, for sure
    tl.store(y_ptr + tl.program_id(0), total)


def scenario_long_launch_names_its_line():
    triton_batch.LONG_LAUNCH = 0.3

    def op(inputs):
        y = torch.empty(2)
        long_loop[(2,)](y, 1000)
        return y

    try:
        return {"right": call(op).tolist() == [1000.0, 1000.0]}
    finally:
        triton_batch.LONG_LAUNCH = 10.0


def scenario_split_undo():
    def op(inputs):
        counter = torch.zeros(1, dtype=torch.int32)
        y = torch.empty(64)
        count_then_branch[(64,)](counter, y)
        return torch.cat([counter.float(), y])

    out = call(op)
    expected = [64.0] + [-1.0 if p % 2 == 0 else float(p) for p in range(64)]
    return {"right": out.tolist() == expected}


def scenario_one_at_a_time():
    def op(inputs):
        y = torch.empty(40)
        loop_over_own_row[(40,)](y)
        return y

    first = call(op)
    return {"right": first.tolist() == [float(p) for p in range(40)],
            "remembered": any(mode == "one" for mode in triton_batch._modes.values())}


def scenario_unbatchable():
    def op(inputs):
        y = torch.empty(4)
        printing[(4,)](y)
        return y

    return {"right": call(op).tolist() == [0.0, 2.0, 4.0, 6.0]}


def scenario_atomics_all_applied():
    x = torch.arange(1000, dtype=torch.float32)

    def op(inputs):
        y = torch.zeros(3)
        scatter_add[(8,)](inputs["x"], y, 1000, BLOCK=128)
        return y

    out = call(op, {"x": x})
    expected = [float(x[r::3].sum()) for r in range(3)]
    return {"right": out.tolist() == expected}


def scenario_million_programs():
    x = torch.arange(1_000_000, dtype=torch.float32)

    def op(inputs):
        y = torch.empty_like(inputs["x"])
        plus_one[(1_000_000,)](inputs["x"], y)
        return y

    start = time.monotonic()
    out = call(op, {"x": x})
    return {"right": torch.equal(out, x + 1), "seconds": time.monotonic() - start}


if __name__ == "__main__":
    for name, fn in sorted(globals().items()):
        if name.startswith("scenario_"):
            print(json.dumps({"scenario": name[len("scenario_"):], **fn()}), flush=True)
    sys.exit(0)
