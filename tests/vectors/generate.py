#!/usr/bin/env python3
# Regenerates tests/vectors/rng.json, tensors.json and corners.json from the Python implementation
# (gpuemu._internal.core.rng, values, cases); the C++ and Python suites both check against them. See docs/rng.md
# "Vectors" and docs/configuration.md "Corner cases".
"""Usage: python3 tests/vectors/generate.py  (after `pip install -e python`). Rewrites all three files
(corners.json: the corner cases of a few op schemas and the case seeds that start a run).

Only regenerate on purpose, after changing docs/rng.md: the vectors are what makes a replay seed
from an older gpuemu regenerate the same inputs, so a diff here is a compatibility break.
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "python"))

from gpuemu._internal.core.dtypes import DTYPE_NAMES, is_floating  # noqa: E402
from gpuemu._internal.core.rng import SeededRng, counter_at, derive_seed  # noqa: E402
from gpuemu._internal.wire.tensors import encode_raw  # noqa: E402
from gpuemu._internal.core.values import (  # noqa: E402
    DISTRIBUTIONS,
    FLOAT_PATTERNS,
    INT_PATTERNS,
    describe_values,
    generate_tensor,
    resolve_domain,
)

import numpy as np  # noqa: E402

MAX64 = (1 << 64) - 1


def f64_bits(x: float) -> str:
    return f"{struct.unpack('<Q', struct.pack('<d', x))[0]:016x}"


def f32_bits(x: float) -> str:
    return f"{struct.unpack('<I', struct.pack('<f', x))[0]:08x}"


def rng_vectors() -> dict:
    seeds = [0, 1, 42, 12345, MAX64, 12345678901234567890, derive_seed(0, "vectors")]
    sequences = []
    for seed in seeds:
        rng = SeededRng(seed)
        u64 = [str(rng.gen_u64()) for _ in range(16)]
        rng = SeededRng(seed)
        f64 = [rng.next_f64() for _ in range(16)]
        rng = SeededRng(seed)
        f32 = [rng.gen_f32() for _ in range(16)]
        sequences.append(
            {
                "seed": str(seed),
                "u64": u64,
                "f64_bits": [f64_bits(v) for v in f64],
                "f64": f64,
                "f32_bits": [f32_bits(v) for v in f32],
            }
        )
    ranges = []
    for seed in (0, 42, MAX64):
        for lo, hi in [(0, 1), (0, 6), (10, 16), (5, 1000003), (0, (1 << 63) + 1), (0, MAX64), (MAX64 - 3, MAX64)]:
            rng = SeededRng(seed)
            values = [str(rng.gen_range(lo, hi)) for _ in range(16)]
            ranges.append({"seed": str(seed), "lo": str(lo), "hi": str(hi), "values": values, "next_u64": str(rng.gen_u64())})
    normals = []
    for seed in (0, 42, 7777, MAX64):
        rng = SeededRng(seed)
        values = [rng.normal() for _ in range(16)]
        normals.append({"seed": str(seed), "bits": [f64_bits(v) for v in values], "values": values})
    derive = []
    for seed, domain in [
        (42, "test"),
        (0, ""),
        (MAX64, "input/x"),
        (42, "input/weight"),
        (123, "values/a"),
        (7, "входы/δ"),
        (7, "入力/重み"),
        (99, "emoji 🚀 rocket"),
        (2**63, "a" * 200),
    ]:
        derive.append({"seed": str(seed), "domain": domain, "expected": str(derive_seed(seed, domain))})
    counters = []
    for stream_seed in (0, 42, MAX64):
        for index in (0, 1, 2, 1000, 2**32, MAX64 - 1):
            value = int(counter_at(stream_seed, np.array([index], dtype=np.uint64))[0])
            counters.append({"stream_seed": str(stream_seed), "index": str(index), "value": str(value)})
    return {
        "spec": "docs/rng.md",
        "generated_by": "tests/vectors/generate.py",
        "published": {"SeededRng(42)": ["14921385303349856026", "836881716698787820", "2679325795615653720"],
                      "derive_seed(42, \"test\")": "11905773293262258603"},  # fmt: skip
        "sequences": sequences,
        "gen_range": ranges,
        "normal": normals,
        "derive_seed": derive,
        "counter": counters,
    }


def json_domain(domain):
    if isinstance(domain, str):
        return domain
    return [v if math.isfinite(v) else ("inf" if v > 0 else "-inf") for v in domain]


def tensor_case(seed: int, dtype: str, shape, domain, distribution: str) -> dict:
    arr = generate_tensor(seed, dtype, shape, domain, distribution)
    _, raw = encode_raw(arr, dtype)
    return {
        "seed": str(seed),
        "dtype": dtype,
        "shape": list(shape),
        "domain": json_domain(domain),
        "distribution": distribution,
        "describe": describe_values(seed, dtype, distribution, domain),
        "hex": raw.hex(),
    }


def find_seed(dtype: str, domain, want: str, start: int) -> int:
    seed = start
    while describe_values(seed, dtype, "adversarial" if want.startswith("adv") else "regular", domain) != want:
        seed += 1
    return seed


def tensor_vectors() -> dict:
    shapes = [[], [0], [1], [3, 5], [2, 3, 4]]
    domains = [(-1.0, 1.0), "any", (0.25, 1000.0)]
    cases = []
    for dtype in DTYPE_NAMES:
        for distribution in DISTRIBUTIONS:
            for shape in shapes:
                for domain in domains:
                    seed = derive_seed(2024, f"{dtype}/{distribution}/{shape}/{json_domain(domain)}")
                    cases.append(tensor_case(seed, dtype, shape, domain, distribution))
    # Every adversarial pattern and regular mode, on domains that stress clamping and subnormals.
    # Domains that hold no value of the dtype must be rejected by both languages.
    invalid = [
        {"dtype": "float16", "domain": [0.1, 0.10001]},
        {"dtype": "float16", "domain": [1e5, "inf"]},
        {"dtype": "bfloat16", "domain": [1.001, 1.002]},
        {"dtype": "int8", "domain": [0.2, 0.8]},
        {"dtype": "int8", "domain": [200.0, 300.0]},
        {"dtype": "int64", "domain": [1e19, 1e20]},
        {"dtype": "float32", "domain": [1.0, 0.0]},
    ]
    for dtype in DTYPE_NAMES:
        if dtype == "bool":
            continue
        floating = is_floating(dtype)
        if floating:
            extra = [(-1.0, 1.0), "any", (0.25, 1000.0), (-1e-5, 1e-5), (0.0, math.inf), (-3.0, 0.0)]
            wanted = ["adversarial/" + p for p in FLOAT_PATTERNS] + ["regular/uniform", "regular/bell"]
        else:
            extra = [(-100.0, 100.0), "any", (0.25, 1000.0), (-math.inf, -1.5)]
            wanted = ["adversarial/" + p for p in INT_PATTERNS]
        for domain in extra:
            try:
                resolve_domain(dtype, domain)
            except ValueError:
                invalid.append({"dtype": dtype, "domain": json_domain(domain)})
                continue
            for want in wanted:
                if want.startswith("regular") and isinstance(domain, str):
                    continue
                seed = find_seed(dtype, domain, want, start=1000)
                dist = want.split("/")[0]
                cases.append(tensor_case(seed, dtype, [4, 6], domain, dist))
            cases.append(tensor_case(77, dtype, [5, 7], domain, "boundary"))
    large = []
    for dtype, shape, domain, distribution in [
        ("float32", [256, 1024], (-1.0, 1.0), "regular"),
        ("float32", [256, 1024], "any", "regular"),
        ("float32", [256, 1024], "any", "boundary"),
        ("float32", [256, 1024], (-1.0, 1.0), "adversarial"),
        ("float16", [512, 512], "any", "mixed"),
        ("bfloat16", [512, 512], (-1e30, 1e30), "regular"),
        ("bfloat16", [512, 512], "any", "adversarial"),
        ("float64", [300, 301], "any", "boundary"),
        ("int64", [1000, 100], "any", "regular"),
        ("int32", [1000, 100], (-1000.0, 1000.0), "boundary"),
    ]:
        for seed in (1, 2):
            case = tensor_case(seed, dtype, shape, domain, distribution)
            case["sha256"] = hashlib.sha256(bytes.fromhex(case.pop("hex"))).hexdigest()
            large.append(case)
    return {"spec": "docs/rng.md", "generated_by": "tests/vectors/generate.py", "cases": cases, "large": large, "invalid_domains": invalid}


def corner_vectors() -> dict:
    """Corner cases (docs/configuration.md "Corner cases"): per op schema the corners, and the first
    case seeds of a test and a fuzz stream (corners first) under two master seeds, with each case's dims."""
    from gpuemu._internal.core.fuzz.cases import DimSpec, OpSpec, case_params, case_shapes, corners, run_case_seed

    schemas = [
        ("mm", [("M", 1, 70, [], []), ("K", 1, 127, [1, 3, 127], [2]), ("N", 1, 300, [], [])],
         {"a": ["M", "K"], "b": ["K", "N"]}, ["float32", "float16"]),
        ("rows", [("R", 0, 8, [], []), ("C", 2, 4096, [], [64, 4096])], {"x": ["R", "C"]}, ["float32"]),
        ("wide", [("B", 4, 64, [], [8]), ("L", 1, 1, [], []), ("H", 16, 16, [16, 64], [])], {"x": ["B", "L", "H"]},
         ["bfloat16"]),
    ]
    ops = []
    for name, dims, inputs, dtypes in schemas:
        op = OpSpec(name=name, dtypes=dtypes, input_names=list(inputs), has_schema=True, schema_inputs=inputs,
                    dims=[DimSpec(n, lo, hi, list(c), list(t)) for n, lo, hi, c, t in dims])
        streams = []
        for master in (1, 12345678901234567890):
            for stream, dtype in (("fuzz", None), (f"test/{dtypes[0]}", dtypes[0])):
                seeds = [run_case_seed(op, master, stream, i, dtype) for i in range(len(corners(op)) + 2)]
                streams.append({"master": str(master), "stream": stream, "dtype": dtype,
                                "cases": [{"seed": str(s), "params": list(case_params(op, s)),
                                           "shapes": {k: list(v) for k, v in case_shapes(op, s).items()}}
                                          for s in seeds]})
        ops.append({"name": name, "dtypes": dtypes, "inputs": inputs,
                    "dims": [{"name": n, "min": lo, "max": hi, "candidates": list(c), "tiles": list(t)}
                             for n, lo, hi, c, t in dims],
                    "corners": [{"name": n, "dims": d} for n, d in corners(op)], "streams": streams})
    return {"spec": "docs/configuration.md", "generated_by": "tests/vectors/generate.py", "ops": ops}


def main() -> None:
    for name, data in (("rng.json", rng_vectors()), ("tensors.json", tensor_vectors()),
                       ("corners.json", corner_vectors())):
        path = HERE / name
        path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
