# The in-process loop a user would write instead of gpuemu for benchmark (i)'s numpy project: the
# yardstick of bench/run.py's peer row (issue 32; docs/performance.md, "(j)").
"""python3 bench/peer_loop.py [--cases N] [--seed S] [--json]

Runs the twelve numpy ops of bench/share_project the way a user would check them without gpuemu, in
one Python process: for each op, N cases (default 22, the 2 test cases and 20 fuzz iterations that
bench (i)'s `ci run` makes per op) with the same shapes (M from {16, 64}, N from {1024, 4096, 8192};
matmul's M, K, N from its candidates), dtype (float32) and domains ([-1, 1], exp's [-4, 4]), inputs
drawn from numpy's generator, the op called and then its float64 reference, and each output judged
element by element with |op - ref| <= atol + rtol * |ref| (the project's tolerances) plus a NaN/Inf
check. Prints how many cases passed and where the time went (generation, op, reference,
comparison); exits 1 if any case failed, as a gate would."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent / "share_project"))

import bench_ops  # noqa: E402
import bench_refs  # noqa: E402

ROWS = {"M": (16, 64), "N": (1024, 4096, 8192)}
UNARY = ["softmax", "layernorm", "rmsnorm", "gelu", "silu", "relu", "scale_shift", "exp", "row_sum"]
# op: (its inputs' shapes as dim names, the dims' candidates, domain, (atol, rtol)); as share_bench.py's
# numpy_ops_toml writes them for gpuemu.
DEFAULT_TOLERANCE = (1e-5, 1e-5)  # float32's default (docs/configuration.md)
OPS = {name: ({"x": ("M", "N")}, ROWS, (-4.0, 4.0) if name == "exp" else (-1.0, 1.0), DEFAULT_TOLERANCE)
       for name in UNARY}
OPS["add"] = ({"x": ("M", "N"), "y": ("M", "N")}, ROWS, (-1.0, 1.0), DEFAULT_TOLERANCE)
OPS["mul_add"] = ({"x": ("M", "N"), "y": ("M", "N"), "z": ("M", "N")}, ROWS, (-1.0, 1.0), DEFAULT_TOLERANCE)
OPS["matmul"] = ({"a": ("M", "K"), "b": ("K", "N")}, {"M": (16, 64), "K": (512, 1024), "N": (512, 1024)},
                 (-1.0, 1.0), (1e-4, 1e-4))


def make_case(rng: np.random.Generator, inputs: dict, dims: dict, domain: tuple) -> dict:
    size = {name: int(rng.choice(candidates)) for name, candidates in dims.items()}
    lo, hi = domain
    return {name: rng.uniform(lo, hi, size=tuple(size[d] for d in shape)).astype(np.float32)
            for name, shape in inputs.items()}


def failing_elements(out, ref, atol: float, rtol: float) -> int:
    """Elements outside |op - ref| <= atol + rtol * |ref|, plus any NaN/Inf the reference does not
    have in the same place; a wrong shape fails every element."""
    out = np.asarray(out)
    ref = np.asarray(ref, dtype=np.float64)
    if out.shape != ref.shape:
        return max(out.size, ref.size, 1)
    o = out.astype(np.float64)
    finite = np.isfinite(o)
    nonfinite_wrong = int(np.count_nonzero(~finite & ~((np.isnan(o) & np.isnan(ref)) | (o == ref))))
    with np.errstate(invalid="ignore"):
        outside = np.abs(o - ref) > atol + rtol * np.abs(ref)
    return int(np.count_nonzero(outside & finite)) + nonfinite_wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=22, help="cases per op (default 22, as bench (i))")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print the summary as one JSON line")
    args = parser.parse_args()

    start = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    spent = {"generate": 0.0, "op": 0.0, "reference": 0.0, "compare": 0.0}
    cases = failed = 0
    for name, (inputs, dims, domain, (atol, rtol)) in OPS.items():
        op, ref = getattr(bench_ops, name), getattr(bench_refs, name)
        for _ in range(args.cases):
            t0 = time.perf_counter()
            case = make_case(rng, inputs, dims, domain)
            t1 = time.perf_counter()
            out = op(case)
            t2 = time.perf_counter()
            expected = ref(case)
            t3 = time.perf_counter()
            bad = failing_elements(out, expected, atol, rtol)
            t4 = time.perf_counter()
            spent["generate"] += t1 - t0
            spent["op"] += t2 - t1
            spent["reference"] += t3 - t2
            spent["compare"] += t4 - t3
            cases += 1
            failed += bad > 0
    total = time.perf_counter() - start
    summary = {"cases": cases, "failed": failed, "secs": total, **{f"{k}_secs": v for k, v in spent.items()}}
    if args.json:
        print(json.dumps(summary))
    else:
        own = spent["generate"] + spent["compare"]
        print(f"peer loop: {cases} cases, {failed} failed, {total:.2f} s: generate {spent['generate']:.2f} s, "
              f"op {spent['op']:.2f} s, reference {spent['reference']:.2f} s, compare {spent['compare']:.2f} s "
              f"(own share {100 * own / total:.0f}%)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
