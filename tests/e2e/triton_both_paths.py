# Runs Triton kernels on both of gpuemu's interpreter paths, batched launches and one program at a time,
# in one process with every layer armed, and prints each case whose outputs or failure differ (issue 39).
"""Usage: python triton_both_paths.py [--quick]   (exit status 1 when any case differs)

The cases: every op of examples/triton (correct and buggy, float32/float16/bfloat16, several shapes and
seeds), the sanitizer's test kernels (python/tests/test_triton_sanitizer.py) and Liger-Kernel's
rms_norm, swiglu, geglu, layer_norm and cross_entropy. Each case runs through frameworks.Converter.call,
as a worker calls an op, once with GPUEMU_TRITON_BATCH=1 and once with 0; the outputs must be equal bit
for bit (NaN where NaN) and a failure must have the same type and message.
"""
from __future__ import annotations

import os
import sys
import time

os.environ["TRITON_INTERPRET"] = "1"
os.environ["GPUEMU_SANITIZE"] = "1"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(ROOT, "examples", "triton"), os.path.join(ROOT, "python", "tests")]

from gpuemu.frameworks import triton_hook  # noqa: E402

triton_hook.arm()
import tomllib  # noqa: E402

import torch  # noqa: E402
import triton  # noqa: E402,F401  (arms the layers now)

from gpuemu import frameworks  # noqa: E402
from gpuemu.frameworks import _triton_batch as triton_batch  # noqa: E402

ORDER_DEPENDENT = "chain (order-dependent: the verdict must match, the wrong values may not)"
CHAIN_RIGHT = torch.arange(1, 17, dtype=torch.float32).view(torch.uint8).numpy().tobytes()
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def call(fn, inputs, dtype, seed):
    conv = frameworks.Converter(frameworks.AdapterSettings(framework="pytorch", device="cpu"))
    return conv.call(fn, inputs, {}, dtype, seed)


SPENT = {True: 0.0, False: 0.0}  # seconds in the op's calls, batched and one program at a time


def outcome(fn, inputs, dtype, seed, batched):
    os.environ[triton_batch.ENV] = "1" if batched else "0"
    fresh = {k: v.clone() for k, v in inputs.items()}
    started = time.perf_counter()
    try:
        out = call(fn, fresh, dtype, seed)
    except Exception as exc:  # noqa: BLE001  (a failure is an outcome to compare)
        return ("error", type(exc).__name__, str(exc))
    finally:
        SPENT[batched] += time.perf_counter() - started
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return ("ok",) + tuple(o.detach().reshape(-1).contiguous().view(torch.uint8).numpy().tobytes() if torch.is_tensor(o)
                           else repr(o) for o in outs)


def example_cases(quick):
    with open(os.path.join(ROOT, "examples", "triton", "gpuemu.toml"), "rb") as f:
        config = tomllib.load(f)
    gen = torch.Generator().manual_seed(39)
    for op in config["ops"]:
        module, name = op["module"].split(":")
        fn = getattr(__import__(module, fromlist=[name]), name)
        dims_spec = op["schema"]["dims"]
        for trial in range(2 if quick else 4):
            dims = {d: (hi if trial == 0 else int(torch.randint(lo, hi + 1, (1,), generator=gen)))
                    for d, (lo, hi) in dims_spec.items()}
            for dtype in (["float32", "bfloat16"] if quick else list(DTYPES)):
                inputs = {k: torch.randn([dims[d] for d in shape], generator=gen).to(DTYPES[dtype])
                          for k, shape in op["schema"]["inputs"].items()}
                yield f"{op['name']}{dims}/{dtype}", fn, inputs, dtype


def sanitizer_cases():
    import test_triton_sanitizer as s  # lazy: its kernels are defined under TRITON_INTERPRET=1 set above

    x13 = torch.arange(13, dtype=torch.float32)
    yield "copy unmasked load", s.copy_op(False, True), {"x": x13}, "float32"
    yield "copy unmasked store", s.copy_op(True, False), {"x": x13}, "float32"
    yield "copy masked", s.copy_op(True, True), {"x": x13}, "float32"
    x8 = torch.tensor([1.0, 3.0, 2.0, 0.5, 1.5, 7.0, 7.0, 7.0])
    for other in (True, False):
        for how in range(3):
            yield f"reduce other={other} how={how}", s.reduce_op(other, how), {"x": x8}, "float32"

    def tickets(inputs):
        counter = torch.zeros(1, dtype=torch.int32)
        out = torch.empty(32, dtype=torch.int32)
        s.ticket_kernel[(32,)](counter, out)
        return out

    def chain(inputs):
        y = torch.zeros(16)
        s.chain_kernel[(16,)](y)
        return y

    yield "tickets", tickets, {}, "float32"
    yield ORDER_DEPENDENT, chain, {}, "float32"


def liger_cases(quick):
    from liger_kernel.ops import cross_entropy, geglu, layer_norm, rms_norm, swiglu  # lazy: installed e2e dep

    gen = torch.Generator().manual_seed(42)
    shapes = [(8, 1024), (3, 300)] if quick else [(8, 1024), (3, 300), (64, 512)]
    for rows, cols in shapes:
        for dtype in ("float32", "bfloat16"):
            t = DTYPES[dtype]
            x = torch.randn(rows, cols, generator=gen).to(t)
            w, b = torch.randn(cols, generator=gen).to(t), torch.randn(cols, generator=gen).to(t)
            a, g = torch.randn(rows, cols, generator=gen).to(t), torch.randn(rows, cols, generator=gen).to(t)
            yield (f"liger rms_norm {rows}x{cols}/{dtype}",
                   lambda i: rms_norm.rms_norm_forward(i["x"], i["w"], 1e-6, 0.0, "llama", None)[0],
                   {"x": x, "w": w}, dtype)
            yield f"liger swiglu {rows}x{cols}/{dtype}", lambda i: swiglu.swiglu_forward(i["a"], i["b"])[-1], \
                {"a": a, "b": g}, dtype
            yield f"liger geglu {rows}x{cols}/{dtype}", lambda i: geglu.geglu_forward(i["a"], i["b"])[-1], \
                {"a": a, "b": g}, dtype
            yield (f"liger layer_norm {rows}x{cols}/{dtype}",
                   lambda i: layer_norm.layer_norm_forward(i["x"], i["w"], i["b"], 1e-5)[0],
                   {"x": x, "w": w, "b": b}, dtype)
            target = torch.randint(0, cols, (rows,), generator=gen)
            target[0] = -100  # an ignored row: its programs take the other branch
            yield (f"liger cross_entropy {rows}x{cols}/{dtype}",
                   lambda i: cross_entropy.cross_entropy_forward(i["x"], i["t"], None, -100, 0.0, 0.1, "mean", None,
                                                                 False)[0],
                   {"x": x.float() if dtype == "float32" else x, "t": target}, dtype)


def main() -> int:
    quick = "--quick" in sys.argv
    differ = total = 0
    for cases in (example_cases(quick), sanitizer_cases(), liger_cases(quick)):
        for name, fn, inputs, dtype in cases:
            for seed in (1, 2):
                total += 1
                batched, alone = outcome(fn, inputs, dtype, seed, True), outcome(fn, inputs, dtype, seed, False)
                if name == ORDER_DEPENDENT:  # both wrong (the carry is not there when a program reads it)
                    batched, alone = [o[0] == "ok" and o[1] != CHAIN_RIGHT for o in (batched, alone)]
                    if not batched:
                        print(f"DIFFERS: {name}: the batched launch passes it", flush=True)
                        differ += 1
                    continue
                if batched != alone:
                    differ += 1
                    print(f"DIFFERS: {name} seed {seed}\n  batched: {str(batched)[:600]}\n  one at a time: "
                          f"{str(alone)[:600]}", flush=True)
    print(f"{total} cases, {differ} differ; op time {SPENT[True]:.2f} s batched, {SPENT[False]:.2f} s one program "
          "at a time", flush=True)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
