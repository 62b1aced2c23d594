# Checks the Python generator against tests/vectors/*.json, which tests/unit/rng/vectors_test.cpp
# also checks: a change on either side of the byte-identical contract fails one of the suites.
import hashlib
import json
import math
import struct

import numpy as np
import pytest

from gpuemu._internal.core.rng import SeededRng, counter_at, derive_seed
from gpuemu._internal.wire.tensors import encode_raw
from gpuemu._internal.core.values import describe_values, generate_tensor, resolve_domain


@pytest.fixture(scope="module")
def rng_vectors(vectors_dir):
    return json.loads((vectors_dir / "rng.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def tensor_vectors(vectors_dir):
    return json.loads((vectors_dir / "tensors.json").read_text(encoding="utf-8"))


def bits64(x: float) -> str:
    return f"{struct.unpack('<Q', struct.pack('<d', x))[0]:016x}"


def domain_of(j):
    if isinstance(j, str):
        return j
    return tuple(math.inf if v == "inf" else -math.inf if v == "-inf" else v for v in j)


def test_published_vectors_are_present_and_hold(rng_vectors):
    published = rng_vectors["published"]
    rng = SeededRng(42)
    assert [str(rng.gen_u64()) for _ in range(3)] == published["SeededRng(42)"]
    assert str(derive_seed(42, "test")) == published['derive_seed(42, "test")']


def test_scalar_sequences(rng_vectors):
    for seq in rng_vectors["sequences"]:
        seed = int(seq["seed"])
        a, b, c = SeededRng(seed), SeededRng(seed), SeededRng(seed)
        assert [str(a.gen_u64()) for _ in range(16)] == seq["u64"]
        assert [bits64(b.next_f64()) for _ in range(16)] == seq["f64_bits"]
        f32 = [f"{struct.unpack('<I', struct.pack('<f', c.gen_f32()))[0]:08x}" for _ in range(16)]
        assert f32 == seq["f32_bits"]


def test_gen_range(rng_vectors):
    for case in rng_vectors["gen_range"]:
        rng = SeededRng(int(case["seed"]))
        got = [str(rng.gen_range(int(case["lo"]), int(case["hi"]))) for _ in range(16)]
        assert got == case["values"], case
        assert str(rng.gen_u64()) == case["next_u64"]


def test_normal(rng_vectors):
    for case in rng_vectors["normal"]:
        rng = SeededRng(int(case["seed"]))
        assert [bits64(rng.normal()) for _ in range(16)] == case["bits"]


def test_derive_seed_and_counters(rng_vectors):
    for case in rng_vectors["derive_seed"]:
        assert str(derive_seed(int(case["seed"]), case["domain"])) == case["expected"], case
    for case in rng_vectors["counter"]:
        got = counter_at(int(case["stream_seed"]), np.array([int(case["index"])], dtype=np.uint64))[0]
        assert str(int(got)) == case["value"]


def test_small_tensors_byte_for_byte(tensor_vectors):
    assert len(tensor_vectors["cases"]) > 500
    for case in tensor_vectors["cases"]:
        domain = domain_of(case["domain"])
        arr = generate_tensor(int(case["seed"]), case["dtype"], case["shape"], domain, case["distribution"])
        assert list(arr.shape) == case["shape"]
        assert encode_raw(arr, case["dtype"])[1].hex() == case["hex"], case
        assert describe_values(int(case["seed"]), case["dtype"], case["distribution"], domain) == case["describe"]


def test_large_tensors_by_sha256(tensor_vectors):
    for case in tensor_vectors["large"]:
        arr = generate_tensor(
            int(case["seed"]), case["dtype"], case["shape"], domain_of(case["domain"]), case["distribution"]
        )
        assert hashlib.sha256(encode_raw(arr, case["dtype"])[1]).hexdigest() == case["sha256"], case


def test_invalid_domains_are_rejected(tensor_vectors):
    for case in tensor_vectors["invalid_domains"]:
        with pytest.raises(ValueError, match="domain"):
            resolve_domain(case["dtype"], domain_of(case["domain"]))
        with pytest.raises(ValueError):
            generate_tensor(1, case["dtype"], [2], domain_of(case["domain"]), "regular")


def test_corner_cases_and_the_seeds_that_start_a_run(vectors_dir):
    # tests/vectors/corners.json (tests/unit/fuzz/corners_test.cpp checks the C++ side): the corners of
    # each schema, and a run's first seeds, corners first, each replaying its corner's shapes.
    from gpuemu._internal.core.fuzz.cases import (DimSpec, OpSpec, case_params, case_shapes, corners, is_corner_seed,
                                             run_case_seed)

    vectors = json.loads((vectors_dir / "corners.json").read_text(encoding="utf-8"))
    assert len(vectors["ops"]) == 3
    for v in vectors["ops"]:
        op = OpSpec(name=v["name"], dtypes=v["dtypes"], input_names=list(v["inputs"]), has_schema=True,
                    schema_inputs=v["inputs"], dims=[DimSpec(d["name"], d["min"], d["max"], d["candidates"],
                                                             d["tiles"]) for d in v["dims"]])
        assert [{"name": n, "dims": d} for n, d in corners(op)] == v["corners"]
        for stream in v["streams"]:
            for i, case in enumerate(stream["cases"]):
                seed = run_case_seed(op, int(stream["master"]), stream["stream"], i, stream["dtype"])
                assert str(seed) == case["seed"]
                assert is_corner_seed(seed) == (i < len(v["corners"]))
                assert list(case_params(op, seed)) == case["params"]
                assert {k: list(s) for k, s in case_shapes(op, seed).items()} == case["shapes"]
