#!/usr/bin/env python3
# Benchmark (n): Triton kernel time under gpuemu with batched launches, one program at a time (the
# interpreter's own loop), and torch eager on one thread, in one process, interleaved (issue 39).
"""(n) op time of Triton kernels: gpuemu's batched launches vs one program at a time vs torch eager.

python3 bench/triton_batch_bench.py [--quick] [--json FILE]

Runs itself in a child process (`--child`), where gpuemu's Triton layers are armed as an op's worker
arms them (batching, compatibility layer, sanitizer; TRITON_INTERPRET=1). Each row is one op at one
shape and dtype: the correct kernels of examples/triton and Liger-Kernel's rms_norm, swiglu, layer_norm
and cross_entropy at 8 x 1024 and 512 x 4096 (cross-entropy at 8 x 1024 and 64 x 32,000), float32
and bfloat16. Each op is called through frameworks.Converter.call with a case seed (as a worker calls
it, sanitizer on), after one warm-up call, in three ABBA rounds (one AB with --quick) of batched
(GPUEMU_TRITON_BATCH=1) and one-at-a-time (=0) calls, with the same math in torch eager
(torch.set_num_threads(1)) after each call; a row reports the medians. One
program at a time with the layers costs what the bare interpreter costs (row (l): the sanitizer is
within 1.04x of it, the compatibility layer 0.95x), and Liger's kernels do not run on the bare
interpreter at all (float arguments, libdevice), so it is the baseline. Targets: median over rows of
one-at-a-time / batched >= 10x; at 512 x 4096, batched within 20x of torch eager."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

SMALL, LARGE = (8, 1024), (512, 4096)


def _ops(torch, F):
    """(name, module:function or a Liger call, shapes -> inputs, torch eager twin) per op."""
    import importlib

    from liger_kernel.ops import cross_entropy, layer_norm, rms_norm, swiglu

    def example(target):
        module, function = target.split(":")
        return getattr(importlib.import_module(module), function)

    def rows(shape, dt, names):
        return {n: torch.randn(*shape).to(dt) for n in names}

    def vec(shape, dt, names):
        return {n: torch.randn(shape[0] * shape[1]).to(dt) for n in names}

    def rms(x, w):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(x.dtype)

    ops = [
        ("softmax", example("kernels.softmax:softmax"), lambda s, dt: rows(s, dt, "x"),
         lambda i: torch.softmax(i["x"].float(), -1).to(i["x"].dtype)),
        ("layernorm", example("kernels.layernorm:layernorm"),
         lambda s, dt: {**rows(s, dt, "x"), "w": torch.randn(s[1]).to(dt), "b": torch.randn(s[1]).to(dt)},
         lambda i: F.layer_norm(i["x"].float(), i["x"].shape[-1:], i["w"].float(), i["b"].float()).to(i["x"].dtype)),
        ("rmsnorm", example("kernels.rmsnorm:rmsnorm"),
         lambda s, dt: {**rows(s, dt, "x"), "w": torch.randn(s[1]).to(dt)},
         lambda i: rms(i["x"], i["w"])),
        ("rowmax", example("kernels.rowmax:rowmax"), lambda s, dt: rows(s, dt, "x"), lambda i: i["x"].max(-1).values),
        ("scale", example("kernels.scale:scale"), lambda s, dt: vec(s, dt, "xw"), lambda i: i["x"] * i["w"]),
        ("swiglu", example("kernels.swiglu:swiglu"), lambda s, dt: vec(s, dt, "ab"),
         lambda i: F.silu(i["a"].float()).to(i["a"].dtype) * i["b"]),
        ("matmul", example("kernels.matmul:matmul"),
         lambda s, dt: {"a": torch.randn(min(8 * s[0], 256), 256).to(dt),
                        "b": torch.randn(256, min(8 * s[0], 256)).to(dt)},
         lambda i: (i["a"].float() @ i["b"].float()).to(i["a"].dtype)),
        ("liger rms_norm", lambda i: rms_norm.rms_norm_forward(i["x"], i["w"], 1e-6, 0.0, "llama", None)[0],
         lambda s, dt: {**rows(s, dt, "x"), "w": torch.randn(s[1]).to(dt)}, lambda i: rms(i["x"], i["w"])),
        ("liger swiglu", lambda i: swiglu.swiglu_forward(i["a"], i["b"])[-1], lambda s, dt: rows(s, dt, "ab"),
         lambda i: F.silu(i["a"].float()).to(i["a"].dtype) * i["b"]),
        ("liger layer_norm", lambda i: layer_norm.layer_norm_forward(i["x"], i["w"], i["b"], 1e-5)[0],
         lambda s, dt: {**rows(s, dt, "x"), "w": torch.randn(s[1]).to(dt), "b": torch.randn(s[1]).to(dt)},
         lambda i: F.layer_norm(i["x"].float(), i["x"].shape[-1:], i["w"].float(), i["b"].float()).to(i["x"].dtype)),
        ("liger cross_entropy",
         lambda i: cross_entropy.cross_entropy_forward(i["x"], i["t"], None, -100, 0.0, 0.0, "mean", None, False)[0],
         lambda s, dt: {"x": torch.randn(*s).to(dt), "t": torch.randint(0, s[1], (s[0],))},
         lambda i: F.cross_entropy(i["x"].float(), i["t"])),
    ]
    return ops


def child(quick: bool) -> list[dict]:
    os.environ.update(TRITON_INTERPRET="1", GPUEMU_SANITIZE="1")
    sys.path[:0] = [str(REPO / "examples" / "triton"), str(REPO / "python")]
    from gpuemu.frameworks import triton_hook

    triton_hook.arm()
    import torch
    import torch.nn.functional as F
    import triton  # noqa: F401  (installs the layers now)

    from gpuemu import frameworks
    from gpuemu.frameworks import _triton_batch as triton_batch

    torch.manual_seed(0)
    torch.set_num_threads(1)
    converter = frameworks.Converter(frameworks.AdapterSettings(framework="pytorch", device="cpu"))
    out = []
    ops = _ops(torch, F)
    ops = [op for op in ops if op[0].startswith("liger")] + [op for op in ops if not op[0].startswith("liger")]
    # Liger's ops first, then the examples' small shapes, then their large ones: one program at a time,
    # a 512 x 4096 softmax in 32-column blocks takes minutes.
    plan = [(op, shape) for op in ops for shape in (SMALL, (64, 32000) if "cross_entropy" in op[0] else LARGE)
            if op[0].startswith("liger")]
    plan += [(op, SMALL) for op in ops if not op[0].startswith("liger")]
    plan += [(op, LARGE) for op in ops if not op[0].startswith("liger")]
    for (name, fn, make, eager), shape in plan:
        for dtype in ("float32", "bfloat16"):
            inputs = make(shape, getattr(torch, dtype))
            times = {"batched": [], "one": [], "eager": []}
            os.environ[triton_batch.ENV] = "1"
            converter.call(fn, inputs, {}, dtype, 1234)  # warms the kernel's rewritten AST (both paths')
            eager(inputs)
            for i in range(2 if quick else 12):
                batched = i % 4 in (0, 3)  # ABBA: a rhythm of the machine cannot land on one side only
                os.environ[triton_batch.ENV] = "1" if batched else "0"
                start = time.perf_counter()
                converter.call(fn, inputs, {}, dtype, 1234 + i)
                times["batched" if batched else "one"].append(time.perf_counter() - start)
                start = time.perf_counter()
                eager(inputs)
                times["eager"].append(time.perf_counter() - start)
            row = {k: statistics.median(v) for k, v in times.items()}
            out.append({"op": name, "shape": list(shape), "dtype": dtype, **row})
            print(json.dumps(out[-1]), file=sys.stderr, flush=True)
    return out


def measure(quick: bool) -> list[dict]:
    # The child's stderr (a JSON line per row as it is measured) passes through: the run takes minutes.
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", *(["--quick"] if quick else [])],
                          stdout=subprocess.PIPE, text=True, timeout=7200)
    if proc.returncode != 0:
        sys.exit(f"bench: the Triton batching benchmark failed (exit {proc.returncode}; its stderr is above)")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def bench_triton_batch(quick: bool) -> list:
    from bench_lib import Row, cpu_description, log

    log("triton batch: Triton kernels batched vs one program at a time vs torch eager")
    rows = measure(quick)
    speedups = [r["one"] / r["batched"] for r in rows]
    median = statistics.median(speedups)
    large = [r for r in rows if r["shape"] == list(LARGE)]
    vs_eager = statistics.median(r["batched"] / r["eager"] for r in large)
    table = [Row("(n) Triton op time, one program at a time / batched (median over rows)", f"{median:.1f}x",
                 f"{len(rows)} rows", median, ">= 10x", median >= 10,
                 note=f"min {min(speedups):.1f}x, max {max(speedups):.1f}x; {cpu_description()}"),
             Row("(n) Triton op time at 512 x 4096, batched / torch eager (median)", f"{vs_eager:.1f}x",
                 f"{len(large)} rows", vs_eager, "<= 20x", vs_eager <= 20)]
    for r in rows:
        table.append(Row(f"(n) {r['op']} {r['shape'][0]}x{r['shape'][1]} {r['dtype']}",
                         f"{r['batched'] * 1e3:.1f} ms", f"{r['one'] * 1e3:.1f} ms one at a time",
                         r["one"] / r["batched"], "", None, note=f"torch eager {r['eager'] * 1e3:.2f} ms "
                         f"({r['batched'] / r['eager']:.0f}x)"))
    return table


if __name__ == "__main__":
    if "--child" in sys.argv:
        print(json.dumps(child("--quick" in sys.argv)))
    else:
        parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
        parser.add_argument("--quick", action="store_true")
        parser.add_argument("--json")
        args = parser.parse_args()
        sys.path.insert(0, str(HERE))
        from bench_lib import print_table

        result = bench_triton_batch(args.quick)
        print_table(result)
        if args.json:
            Path(args.json).write_text(json.dumps([r.__dict__ for r in result], indent=2))
