#!/usr/bin/env python3
# (g) of docs/performance.md: gpuemu.frameworks' conversion of a 64 MiB tensor into a framework and
# back (what a warm worker does per case), against a memcpy of the same bytes in the same run.
"""python3 bench/adapter_bench.py [--quick]: the adapter conversion rows alone (bench/run.py --only g)."""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "python"))

from bench_lib import Row, fmt_bytes_rate, log, print_table  # noqa: E402

MIB = 1 << 20


def _convert_once(conv, storage: np.ndarray, dtype: str, make_output) -> None:
    """One case's worth of the worker's conversions: storage view -> framework tensor -> the op's
    result (make_output, no arithmetic) -> numpy -> the bytes the result frame carries."""
    from gpuemu.wire import tensors

    t = conv.input(storage, dtype, "x", "bench")
    out = make_output(t)
    for _, arr in conv.outputs(out, "bench"):
        _, raw = tensors.encode_view(arr, conv.wire_dtype(arr, dtype))
        raw.nbytes  # noqa: B018  (the frame writer reads the view; nothing else is touched)


def _pairs(conv, storage, dtype, make_output, repeats: int) -> tuple[list[float], list[float]]:
    """Interleaved samples: conversion seconds and memcpy seconds of in + out bytes, so drift hits both."""
    src = np.ascontiguousarray(storage).reshape(-1).view(np.uint8)
    dst = np.empty_like(src)
    np.copyto(dst, src)  # warm the destination pages
    _convert_once(conv, storage, dtype, make_output)
    convert, copy = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        _convert_once(conv, storage, dtype, make_output)
        convert.append(time.perf_counter() - start)
        start = time.perf_counter()
        np.copyto(dst, src)  # in ...
        np.copyto(dst, src)  # ... and out: the same bytes the conversion moves both ways
        copy.append(time.perf_counter() - start)
    return convert, copy


def _row(name: str, convert: list[float], copy: list[float], nbytes: int, target: bool) -> Row:
    ratios = [c / v for v, c in zip(convert, copy)]
    ratio = statistics.median(ratios)
    med_v, med_c = statistics.median(convert), statistics.median(copy)
    return Row(f"(g) {name}", fmt_bytes_rate(2 * nbytes / med_v) if med_v > 0 else "inf",
               fmt_bytes_rate(2 * nbytes / med_c) + " (memcpy)", ratio, ">= 0.5x" if target else "",
               (ratio >= 0.5) if target else None,
               note=f"median {med_v * 1e3:.3f} ms vs memcpy of in+out {med_c * 1e3:.2f} ms over {len(ratios)} pairs")


def bench_adapter(quick: bool = False) -> list[Row]:
    from gpuemu.frameworks import AdapterSettings, Converter

    repeats = 5 if quick else 15
    n = 64 * MIB // 4
    rows: list[Row] = []
    values = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    square = values.reshape(4096, 4096)
    try:
        import torch
    except ImportError:
        return [Row("(g) adapter conversion", "not run", "", None, ">= 0.5x", None, note="torch is not installed")]
    conv = Converter(AdapterSettings(framework="pytorch", device="cpu"))
    log("adapter: torch float32 64 MiB in and out")
    rows.append(_row("torch float32 64 MiB in+out, contiguous", *_pairs(conv, square, "float32", lambda t: t, repeats),
                     square.nbytes, True))
    bits = (values.view(np.uint32) >> 16).astype(np.uint16)  # 64 MiB of bfloat16: 32 Mi elements
    bits = np.concatenate([bits, bits]).reshape(8192, 4096)
    rows.append(_row("torch bfloat16 64 MiB in+out, contiguous", *_pairs(conv, bits, "bfloat16", lambda t: t,
                                                                          repeats), bits.nbytes, True))
    rows.append(_row("torch float32 64 MiB in+out, transposed input", *_pairs(conv, square.T, "float32",
                                                                              lambda t: t.t(), repeats),
                     square.nbytes, True))
    # Breakdown: an op that returns a transposed view; the frame needs row-major bytes, one copy.
    rows.append(_row("breakdown: torch float32 64 MiB, transposed output", *_pairs(conv, square, "float32",
                                                                                   lambda t: t.t(), repeats),
                     square.nbytes, False))
    for framework in ("jax", "tensorflow"):
        try:
            other = Converter(AdapterSettings(framework=framework, device="cpu"))
        except ImportError:
            continue
        log(f"adapter: {framework} float32 64 MiB in and out (breakdown)")
        rows.append(_row(f"breakdown: {framework} float32 64 MiB in+out", *_pairs(other, square, "float32",
                                                                                  lambda t: t, repeats),
                         square.nbytes, False))
    return rows


def main() -> int:
    import os
    import platform

    quick = "--quick" in sys.argv[1:]
    load = os.getloadavg()[0]
    rows = bench_adapter(quick)
    print(f"adapter conversion, {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"1-min load average {load:.2f} before and {os.getloadavg()[0]:.2f} after")
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
