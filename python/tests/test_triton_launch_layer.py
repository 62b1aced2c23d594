# The launch layer (gpuemu/frameworks/_triton_launches.py) on a real @triton.jit kernel under Triton's CPU
# interpreter: launches counted per call, kernel_not_launched when a launch is required, malformed grids.
"""No mocks: the kernel runs under TRITON_INTERPRET=1 through frameworks.Converter.call, the call the
worker makes; the layer is installed for this module and removed after (tests/e2e/test_triton_launches.py
runs the same through the gpuemu binary)."""

import os

os.environ["TRITON_INTERPRET"] = "1"  # read by @triton.jit when the kernel below is defined

import numpy as np  # noqa: E402
import pytest  # noqa: E402

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

from gpuemu import frameworks  # noqa: E402
from gpuemu.errors import KernelNotLaunchedError, MalformedLaunchError  # noqa: E402
from gpuemu.frameworks import _triton_launches as triton_launches  # noqa: E402


@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


def launch(grid):
    def op(inputs):
        x = inputs["x"]
        out = torch.zeros_like(x)
        double_kernel[grid](x, out, x.numel(), BLOCK=16)  # LAUNCH_LINE
        return out

    return op


def twice(inputs):
    launch((2,))(inputs)
    return launch([np.int64(2)])(inputs)  # a list of numpy integers: what a GPU launch takes too


def torch_only(inputs):
    return inputs["x"] * 2


@pytest.fixture(autouse=True)
def layer(monkeypatch):
    triton_launches.uninstall()  # a fresh layer: no kernel seen by an earlier test
    assert triton_launches.install()
    monkeypatch.setenv(triton_launches.ENV, "1")
    yield
    triton_launches.uninstall()


def converter(role="op"):
    return frameworks.Converter(frameworks.AdapterSettings(framework="pytorch", device="cpu", role=role))


X = {"x": torch.arange(20, dtype=torch.float32)}


def test_each_call_counts_its_launches_per_kernel():
    conv = converter()
    out = conv.call(twice, X, {}, "float32", 1)
    assert torch.equal(out, X["x"] * 2)
    assert conv.launches() == {"double_kernel": 2}
    conv.call(launch(lambda meta: (triton.cdiv(20, meta["BLOCK"]),)), X, {}, "float32", 2)
    assert conv.launches() == {"double_kernel": 1}  # per call, not per worker


def test_a_call_that_launches_nothing_fails_naming_the_kernel_unless_not_required(monkeypatch):
    conv = converter()
    conv.call(launch((2,)), X, {}, "float32", 1)  # this kernel is then the one expected
    with pytest.raises(KernelNotLaunchedError, match="returned without launching the kernel 'double_kernel'"):
        conv.call(torch_only, X, {}, "float32", 1)
    assert conv.launches() == {}
    monkeypatch.setenv(triton_launches.ENV, "0")  # require_launch = false
    assert torch.equal(conv.call(torch_only, X, {}, "float32", 1), X["x"] * 2)
    monkeypatch.setenv(triton_launches.ENV, "1")
    assert converter("reference").call(torch_only, X, {}, "float32", 1) is not None  # a reference launches nothing
    assert converter("reference").launches() is None


@pytest.mark.parametrize("grid, problem", [
    (((2,), (16,)), "kernel[grid, block] is CUDA's launch: Triton's block size is a tl.constexpr argument"),
    (((2,), 16), "entry 0 is (2,), a tuple, not an integer"),
    ((2.0,), "entry 0 is 2.0, a float, not an integer"),
    ((), "it has 0 entries"),
    ((1, 1, 1, 1), "it has 4 entries"),
    ((-1,), "entry 0 is -1, below 0"),
    (2, "a int is not a tuple of sizes"),
])
def test_a_grid_triton_does_not_accept_is_the_ops_error_at_its_launch_line(grid, problem):
    with pytest.raises(MalformedLaunchError) as caught:
        converter().call(launch(grid), X, {}, "float32", 1)
    with open(__file__, encoding="utf-8") as f:
        line = next(i for i, text in enumerate(f, 1) if "# LAUNCH_LINE" in text)
    message = str(caught.value)
    assert caught.value.kind == "op_error"
    where = os.path.relpath(__file__) if __file__.startswith(os.getcwd() + os.sep) else __file__
    assert f"kernel 'double_kernel' launched at {where}:{line} with grid {grid!r}: {problem}; " in message
    assert message.endswith("Triton expects kernel[grid](...) with 1 to 3 non-negative integers, or a grid "
                            "function returning them")
