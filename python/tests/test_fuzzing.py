# Tests of the client-side fuzz helpers: seeded generators replay, shapes respect their bounds,
# layouts are real memory layouts, and SeededFuzzer catches wrong, cheating and crashing ops.
import numpy as np
import pytest

from gpuemu import (
    FuzzConfig,
    SeededFuzzer,
    SeededRng,
    fuzz_dtypes,
    fuzz_dtypes_seeded,
    fuzz_layouts,
    fuzz_layouts_seeded,
    fuzz_shapes,
    fuzz_shapes_seeded,
    generate_random_tensor,
)
from gpuemu._internal.core.dtypes import DTYPE_NAMES
from gpuemu._internal.core.fuzz.cases import choose_dim
from gpuemu._internal.core.layouts import with_layout
from gpuemu._internal.core.values import generate_tensor


def test_seeded_generators_replay_and_differ_by_seed():
    assert list(fuzz_shapes_seeded(5, count=20)) == list(fuzz_shapes_seeded(5, count=20))
    assert list(fuzz_shapes_seeded(5, count=20)) != list(fuzz_shapes_seeded(6, count=20))
    assert list(fuzz_dtypes_seeded(5, count=20)) == list(fuzz_dtypes_seeded(5, count=20))
    assert list(fuzz_layouts_seeded(5, count=20)) == list(fuzz_layouts_seeded(5, count=20))


def test_shapes_stay_inside_their_bounds():
    for shape in fuzz_shapes_seeded(1, min_dims=2, max_dims=3, min_size=2, max_size=500, count=300):
        assert 2 <= len(shape) <= 3
        assert all(2 <= d <= 500 for d in shape)
        assert int(np.prod(shape)) <= 500
    shapes = list(fuzz_shapes(min_dims=1, max_dims=1, min_size=1, max_size=64, count=200))
    sizes = {s[0] for s in shapes}
    assert {1, 63, 64} & sizes, "boundary-aware sizes must show up"
    with pytest.raises(ValueError, match="min_dims <= max_dims"):
        next(fuzz_shapes(min_dims=3, max_dims=2))


def test_dtype_and_layout_filters():
    drawn = set(fuzz_dtypes_seeded(3, include=["f32", "half", "bf16"], exclude=["float16"], count=200))
    assert drawn == {"float32", "bfloat16"}
    assert set(fuzz_dtypes(count=500)) == set(DTYPE_NAMES)  # every dtype (src/tensor/dtype.cpp, mirrored)
    assert set(fuzz_layouts(count=100)) == {"contiguous", "transposed", "strided", "channels_last"}
    assert set(fuzz_layouts_seeded(1, include=["strided"], count=5)) == {"strided"}
    with pytest.raises(ValueError, match="no dtype left"):
        fuzz_dtypes(include=["float32"], exclude=["f32"])
    with pytest.raises(ValueError, match="channels_first"):
        fuzz_layouts(include=["channels_first"])


def test_choose_dim_prefers_boundaries_but_covers_the_range():
    rng = SeededRng(42)
    drawn = [choose_dim(rng, 1, 300) for _ in range(3000)]
    assert min(drawn) == 1 and max(drawn) == 300
    assert {1, 2, 3, 127, 128, 129, 255, 256, 257, 251, 300} <= set(drawn)
    boundary = {1, 300, 127, 128, 129, 255, 256, 257}
    assert sum(d in boundary for d in drawn) > 3000 * 0.1  # uniform draws would give under 3%
    assert choose_dim(SeededRng(1), 7, 7) == 7


def test_generate_random_tensor_is_the_value_generator():
    a = generate_random_tensor(99, (3, 5), "float16", (-2.0, 2.0))
    assert a.dtype == np.float16 and a.shape == (3, 5)
    assert np.array_equal(a, generate_tensor(99, "float16", (3, 5), (-2.0, 2.0), "regular"))
    assert a.min() >= -2.0 and a.max() <= 2.0
    big = (1 << 64) - 1
    assert np.array_equal(generate_random_tensor(big, (4,)), generate_random_tensor(big, (4,)))


def test_channels_last_is_nhwc_memory_and_torch_channels_last():
    # python-api.txt's fuzz_layouts() yields "channels_last": a real NHWC-strided 4-D tensor.
    x = generate_random_tensor(3, (2, 3, 4, 5))
    y = with_layout(x, "channels_last")
    assert np.array_equal(x, y) and not y.flags.c_contiguous
    assert [s // 4 for s in y.strides] == [60, 1, 15, 3]  # (H*W*C, 1, W*C, C), as tensor::with_layout
    assert np.array_equal(np.lib.stride_tricks.as_strided(y, (3,), (4,)), x[0, :, 0, 0])  # channels adjacent
    assert with_layout(generate_random_tensor(3, (4, 5)), "channels_last").flags.c_contiguous  # no channel dim
    assert [s // 4 for s in with_layout(generate_random_tensor(3, (1, 2, 3, 4, 5)), "channels_last").strides] == \
        [120, 1, 40, 10, 2]  # rank 5: torch's channels_last_3d
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(y)
    assert t.is_contiguous(memory_format=torch.channels_last) and not t.is_contiguous()
    assert torch.equal(t, torch.from_numpy(x).contiguous(memory_format=torch.channels_last))


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided", "channels_last"])
def test_with_layout_keeps_values_and_changes_memory(layout):
    x = generate_random_tensor(1, (2, 3, 5))
    y = with_layout(x, layout)
    assert np.array_equal(x, y)
    if layout == "transposed":
        assert y.strides[-2] == 4 and y.strides[-1] == 3 * 4
    if layout == "strided":
        assert y.strides[-2] == 8 * 4 and not y.flags.c_contiguous
    v = with_layout(np.arange(4, dtype=np.int32), "strided")
    assert v.strides == (8,) and list(v) == [0, 1, 2, 3]


def test_seeded_fuzzer_is_reproducible_and_random_access():
    cfg = FuzzConfig(iterations=5, dtypes=["float32", "bfloat16"], layouts=["contiguous", "strided"], max_size=256)
    f1 = SeededFuzzer(2**63 + 5, cfg, input_names=("a", "b"))
    cases = [f1.next_test_case() for _ in range(5)]
    again = SeededFuzzer(2**63 + 5, cfg, input_names=("a", "b")).case(3)
    assert again.seed == cases[3].seed and again.shape == cases[3].shape
    assert all(np.array_equal(again.inputs[k], cases[3].inputs[k]) for k in ("a", "b"))
    assert {c.dtype for c in cases} <= {"float32", "bfloat16"}
    assert cases[0].inputs["a"].shape == cases[0].shape
    assert cases[0]["seed"] == cases[0].seed


def relu(inputs):
    return np.maximum(inputs["x"], 0)


def test_seeded_fuzzer_run_finds_wrong_cheating_and_crashing_ops():
    cfg = FuzzConfig(iterations=12, dtypes=["float32"], layouts=["contiguous", "transposed", "strided"], max_size=512)
    ok = SeededFuzzer(11, cfg).run(relu, relu, op_name="relu")
    assert (ok.total, ok.passed, ok.failed) == (12, 12, 0)

    wrong = SeededFuzzer(11, cfg).run(lambda i: relu(i) * 1.001, relu)
    assert wrong.failed > 0 and wrong.failures[0].kind == "mismatch"
    assert "outside atol=1e-05" in wrong.failures[0].failures[0]["message"]
    assert wrong.failures[0].repro_info.seed == wrong.failures[0].seed

    def mutate(inputs):
        inputs["x"][...] = 0
        return np.zeros(inputs["x"].shape, np.float32)

    assert SeededFuzzer(11, cfg).run(mutate, relu).failures[0].kind == "input_mutated"
    assert SeededFuzzer(11, cfg).run(lambda i: i["x"], relu).failures[0].kind == "output_aliased"
    crash = SeededFuzzer(11, cfg).run(lambda i: 1 / 0, relu, fail_fast=True)
    assert crash.total == 1 and crash.failures[0].kind == "op_error"
    assert "ZeroDivisionError" in crash.failures[0].failures[0]

    nan_out = SeededFuzzer(11, cfg).run(lambda i: np.full(i["x"].shape, np.nan, np.float32))
    assert nan_out.failed == 12 and nan_out.failures[0].kind == "unexpected_nonfinite"
