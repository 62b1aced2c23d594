#!/usr/bin/env python3
# The cost of gpuemu's Triton compatibility layer: the example kernels' op time under the bare interpreter
# and with the layer installed, each in its own process, interleaved, CPU time (docs/performance.md).
"""python3 bench/triton_compat_bench.py [--repeats N]

Runs examples/triton's softmax, matmul and layernorm (the kernels the bare interpreter can run) at
float32 and float16 on fixed inputs, in a fresh process per sample, alternating bare and layer
samples so the machine's drift hits both; prints the median CPU seconds of a pass over the kernels and
the ratio layer / bare (issue 30's target: at most 1.5x)."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

SAMPLE = r'''
import sys, time
sys.path[:0] = [sys.argv[2], sys.argv[3]]
if sys.argv[1] == "layer":
    from gpuemu.frameworks import triton_hook
    triton_hook.arm()
import torch
from kernels import layernorm, matmul, softmax
gen = torch.Generator().manual_seed(0)
cases = []
for dt in (torch.float32, torch.float16):
    r = lambda *s: torch.randn(*s, generator=gen).to(dt)
    cases += [(softmax.softmax, {"x": r(4, 100)}), (matmul.matmul, {"a": r(32, 48), "b": r(48, 32)}),
              (layernorm.layernorm, {"x": r(4, 128), "w": r(128), "b": r(128)})]
for fn, inputs in cases:
    fn(inputs)  # first launches: the interpreter's rewrite of each kernel, not what a case pays
best = float("inf")
for _ in range(3):
    started = time.process_time()
    for fn, inputs in cases:
        fn(inputs)
    best = min(best, time.process_time() - started)
print(best)
'''


def sample(mode: str) -> float:
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    proc = subprocess.run([sys.executable, "-c", SAMPLE, mode, str(REPO / "python"), str(REPO / "examples" / "triton")],
                          env=env, capture_output=True, text=True, timeout=600, check=True)
    return float(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    bare, layer = [], []
    for _ in range(args.repeats):
        bare.append(sample("bare"))
        layer.append(sample("layer"))
    b, l = statistics.median(bare), statistics.median(layer)
    print(f"load {os.getloadavg()[0]:.2f}; bare interpreter {b * 1e3:.1f} ms CPU per pass (min {min(bare) * 1e3:.1f}), "
          f"with the compatibility layer {l * 1e3:.1f} ms (min {min(layer) * 1e3:.1f}): {l / b:.2f}x (target <= 1.5x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
