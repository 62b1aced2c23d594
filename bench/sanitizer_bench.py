# Benchmark (l): what the Triton sanitizer costs: the correct kernels of examples/triton called the
# way the worker calls them, sanitized and on the bare interpreter, in one process, alternating.
"""(l) sanitizer op time / bare interpreter op time on examples/triton. Target: <= 1.5x.

Runs itself in a child process (`python3 bench/sanitizer_bench.py --child`), because @triton.jit reads
TRITON_INTERPRET when each kernel is defined. Each correct op of examples/triton (softmax, matmul,
layernorm, scale, rowmax) is called through frameworks.Converter.call with a case seed, at float32 on
shapes inside its schema with dead lanes, alternately with the sanitizer installed and removed; the
row is the ratio of the summed medians (and the worst op's ratio)."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
TRITON_EXAMPLES = REPO / "examples" / "triton"

# (op, module:function, {input: shape}) at shapes with tail blocks, inside each op's schema.
OPS = [
    ("softmax", "kernels.softmax:softmax", {"x": (4, 100)}),
    ("matmul", "kernels.matmul:matmul", {"a": (32, 48), "b": (48, 32)}),
    ("layernorm", "kernels.layernorm:layernorm", {"x": (4, 100), "w": (100,), "b": (100,)}),
    ("scale", "kernels.scale:scale", {"x": (200,), "w": (200,)}),
    ("rowmax", "kernels.rowmax:rowmax", {"x": (4, 100)}),
]


def child(repeats: int) -> dict:
    os.environ["TRITON_INTERPRET"] = "1"
    sys.path[:0] = [str(TRITON_EXAMPLES), str(REPO / "python")]
    import importlib

    import torch

    from gpuemu import frameworks
    from gpuemu.frameworks import _triton_sanitizer as triton_sanitizer

    torch.manual_seed(0)
    converter = frameworks.Converter(frameworks.AdapterSettings(framework="pytorch", device="cpu"))
    out = {}
    for name, target, shapes in OPS:
        module, function = target.split(":")
        fn = getattr(importlib.import_module(module), function)
        inputs = {k: torch.rand(shape) + 0.5 for k, shape in shapes.items()}
        times = {"bare": [], "sanitized": []}
        for i in range(4 * repeats + 4):
            # ABBA order (bare, sanitized, sanitized, bare, ...): a disturbance that comes every other
            # call (another process's rhythm on a shared machine) cannot land on one side only.
            sanitized = i % 4 in (1, 2)
            if sanitized:
                triton_sanitizer.install()
            start = time.perf_counter()
            converter.call(fn, inputs, {}, "float32", 1234 + i)
            elapsed = time.perf_counter() - start
            triton_sanitizer.uninstall()
            if i >= 4:  # the first round warms the interpreter's caches (the kernel's rewritten AST)
                times["sanitized" if sanitized else "bare"].append(elapsed)
        out[name] = {k: statistics.median(v) for k, v in times.items()}
    return out


def measure(quick: bool) -> dict:
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", "3" if quick else "11"],
                          capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        sys.exit(f"bench: the sanitizer benchmark failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def bench_sanitizer(quick: bool) -> list:
    from bench_lib import Row, log

    log("sanitizer: examples/triton's correct kernels, sanitized vs the bare interpreter")
    per_op = measure(quick)
    bare = sum(t["bare"] for t in per_op.values())
    sanitized = sum(t["sanitized"] for t in per_op.values())
    ratio = sanitized / bare
    worst = max(per_op.items(), key=lambda item: item[1]["sanitized"] / item[1]["bare"])
    detail = ", ".join(f"{name} {t['sanitized'] * 1e3:.1f}/{t['bare'] * 1e3:.1f} ms" for name, t in per_op.items())
    return [Row("(l) Triton sanitizer op time vs bare interpreter", f"{sanitized * 1e3:.1f} ms",
                f"{bare * 1e3:.1f} ms (bare)", ratio, "<= 1.5x", ratio <= 1.5,
                note=f"worst op {worst[0]} {worst[1]['sanitized'] / worst[1]['bare']:.2f}x; per op sanitized/bare "
                     f"median: {detail}; {os.cpu_count()} x {cpu_model()}")]


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        print(json.dumps(child(int(sys.argv[2]))))
    else:
        sys.path.insert(0, str(HERE))
        from bench_lib import print_table

        print_table(bench_sanitizer("--quick" in sys.argv))
