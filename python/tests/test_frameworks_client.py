"""The Python client with framework tensors, inline (no daemon): validate_op and the context manager
take torch, jax and DLPack tensors (bfloat16 too), and fuzz_op_client_side hands run_op the op's
framework tensors through the same Converter as the worker, with the guard's checks intact."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from framework_cases import OnlyDLPack, need
from gpuemu import Client, validate_op

torch = need("torch")

TOML = """
[project]
name = "client-frameworks"

[validation]
dtypes = ["bfloat16", "float32"]

[[ops]]
name = "relu"
reference = "refs:relu"
execution_mode = "client_side"

[ops.inputs.x]
shape = [6, 17]

[[ops]]
name = "relu_torch"
reference = "refs:relu"
execution_mode = "client_side"
framework = "pytorch"
"""

REFS = """
import numpy as np
import gpuemu

seen = []

def relu(inputs, **kwargs):
    seen.append((inputs["x"].dtype.name, gpuemu.case_dtype()))
    return np.maximum(inputs["x"].astype(np.float64), 0.0)
"""


@pytest.fixture
def client(tmp_path, monkeypatch):
    (tmp_path / "gpuemu.toml").write_text(TOML)
    (tmp_path / "refs.py").write_text(textwrap.dedent(REFS))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GPUEMU_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.syspath_prepend(str(tmp_path))
    with Client(inline=True) as c:
        yield c


def test_validate_op_takes_torch_bfloat16_tensors(client):
    x = torch.linspace(-2, 2, 36).reshape(6, 6).to(torch.bfloat16).t()  # transposed: not contiguous
    ok = client.validate_op("relu", {"x": x}, torch.relu(x), dtype="bfloat16")
    assert ok.passed and ok.dtype == "bfloat16", ok.failures
    bad = client.validate_op("relu", {"x": x}, torch.where(x > 0, x, x * 0.5), dtype="bfloat16")
    assert not bad.passed and bad.kind == "mismatch"
    with validate_op(client, "relu", inputs={"x": x}, dtype="bfloat16") as ctx:
        ctx.set_output(torch.relu(x))
    assert ctx.result.passed


def test_validate_op_takes_jax_and_dlpack_tensors(client):
    jnp = need("jax.numpy")
    x = jnp.linspace(-1, 1, 12, dtype=jnp.float32).reshape(3, 4)
    assert client.validate_op("relu", {"x": x}, jnp.maximum(x, 0)).passed

    xt = torch.linspace(-1, 1, 12).reshape(3, 4)
    assert client.validate_op("relu", {"x": OnlyDLPack(xt)}, OnlyDLPack(torch.relu(xt))).passed


def test_fuzz_gives_run_op_the_frameworks_tensors_and_stays_guarded(client):
    got = set()

    def relu(inputs):
        x = inputs["x"]
        got.add((type(x).__name__, str(x.dtype)))
        return torch.relu(x)

    good = client.fuzz_op_client_side("relu", run_op=relu, iterations=8, seed=5, framework="pytorch")
    assert good.passed == 8, [str(r.failures) for r in good.failures]
    assert got == {("Tensor", "torch.bfloat16"), ("Tensor", "torch.float32")}

    mutated = client.fuzz_op_client_side("relu", run_op=lambda i: torch.relu_(i["x"]).clone(), iterations=2, seed=5,
                                         framework="pytorch")
    assert {f.kind for f in mutated.failures} == {"input_mutated"}
    aliased = client.fuzz_op_client_side("relu", run_op=lambda i: i["x"], iterations=2, seed=5, framework="pytorch")
    assert {f.kind for f in aliased.failures} == {"output_aliased"}
    meta = client.fuzz_op_client_side("relu", run_op=lambda i: torch.empty(6, 17, device="meta"), iterations=1,
                                      seed=5, framework="pytorch")
    assert meta.failures[0].kind == "op_error" and "is on device 'meta'" in str(meta.failures[0].failures[0])


def test_the_ops_framework_key_picks_the_tensors(client):
    kinds = []
    result = client.fuzz_op_client_side("relu_torch", run_op=lambda i: kinds.append(type(i["x"])) or torch.relu(i["x"]),
                                        iterations=3, seed=9)
    assert result.passed == 3 and set(kinds) == {torch.Tensor}
    plain = []
    client.fuzz_op_client_side("relu", run_op=lambda i: plain.append(i["x"].dtype) or np.maximum(i["x"], 0),
                               iterations=4, seed=9)
    assert set(plain) <= {np.dtype(np.float32)}  # no framework written: numpy as before (bfloat16 as float32)
