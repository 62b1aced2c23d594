# Every Client method end to end against a real daemon serving a copy of examples/ (plus the
# client-side op softmax_client): client-side, daemon-orchestrated and script-based modes, the
# store, replay and minimization of failures, NaN/Inf and u64 seeds, the protocol vectors.
import json
import math

import numpy as np
import pynng
from pathlib import Path

import pytest

from gpuemu import Client, DaemonError, ProtocolMismatchError
from gpuemu._internal.wire import protocol
from gpuemu.errors import ValidationError
from gpuemu.validation import validate_op

REPO_ROOT = Path(__file__).resolve().parents[2]

BIG_SEED = 2**64 - 12345  # far above 2^53: survives only as an exact decimal string
VECTORS = json.loads((REPO_ROOT / "tests" / "vectors" / "protocol" / "messages.json").read_text())


@pytest.fixture
def client(daemon, monkeypatch):
    monkeypatch.chdir(daemon.project)
    with Client(socket_path=str(daemon.socket), timeout_ms=60000, inline=False) as c:
        yield c


def softmax(x):
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def numpy_softmax(inputs):
    return softmax(inputs["x"]).astype(np.float32)


def softmax_tail_bug(inputs):
    """The examples' tail-tile bug in numpy: columns past the last full 32-wide block stay zero."""
    x = inputs["x"].astype(np.float32)
    out = np.zeros_like(x)
    full = (x.shape[-1] // 32) * 32 or x.shape[-1]
    out[..., :full] = softmax(x[..., :full]).astype(np.float32)
    return out


def test_ping(client, daemon):
    info = client.ping()
    assert info["protocol_version"] == protocol.PROTOCOL_VERSION
    assert info["version"] and info["uptime_secs"] >= 0 and info["served"] >= 0
    assert info["socket"] == str(daemon.socket)


def test_validate_op_results_and_baseline(client):
    x = np.random.default_rng(1).uniform(-30, 30, (7, 45)).astype(np.float32)
    ok = client.validate_op("softmax_client", {"x": x}, numpy_softmax({"x": x}), seed=BIG_SEED)
    assert ok.passed and ok.seed == BIG_SEED and ok.op_name == "softmax_client", ok.failures
    bad = client.validate_op("softmax_client", {"x": x}, softmax_tail_bug({"x": x}), seed=BIG_SEED - 1)
    assert not bad.passed and bad.kind == "mismatch" and bad.seed == BIG_SEED - 1
    assert bad.failures[0]["message"] and bad.max_diff > 1e-3 and bad.repro_info.shape == (7, 45)

    stored = client.get_result(BIG_SEED - 1)
    assert stored is not None and stored.seed == BIG_SEED - 1 and not stored.passed
    assert client.get_result(BIG_SEED).passed
    assert client.get_result(12) is None
    assert "softmax_client" in {r.op_name for r in client.list_results(limit=100)}
    assert BIG_SEED - 1 in {f.seed for f in client.list_failures(limit=100)}
    assert client.store_baseline("py-client")["tag"] == "py-client"

    with pytest.raises(DaemonError, match="softmx") as err:
        client.validate_op("softmx", {"x": x}, x)
    assert err.value.kind == "config" and "softmax" in str(err.value)


def test_nonfinite_values_round_trip(client):
    x = np.array([[0.0, np.inf, 1.0], [np.nan, 2.0, 3.0], [-np.inf, 0.0, 1.0]], dtype=np.float32)
    with np.errstate(invalid="ignore"):
        expected = softmax(x).astype(np.float32)
    assert np.isnan(expected).any()
    result = client.validate_op("softmax_client", {"x": x}, expected, seed=5)
    assert result.passed, result.failures  # NaN where the reference has NaN: inputs and output arrived intact
    wrong = expected.copy()
    wrong[2, 0] = np.inf
    result = client.validate_op("softmax_client", {"x": x}, wrong, seed=6)
    assert not result.passed and result.kind == "unexpected_nonfinite"
    assert math.isinf(result.max_rel_diff) or result.max_rel_diff >= 0


def test_validate_op_context_manager(client):
    x = np.random.default_rng(2).uniform(-5, 5, (3, 70)).astype(np.float32)
    with validate_op(client, "softmax_client", inputs={"x": x}) as ctx:
        ctx["output"] = numpy_softmax({"x": x})
    assert ctx.result.passed
    with pytest.raises(ValidationError):
        with validate_op(client, "softmax_client", inputs={"x": x}) as ctx:
            ctx.set_output(softmax_tail_bug({"x": x}))


def test_validate_op_block_that_writes_its_input_is_input_mutated(client):
    """The op inside a validate_op block wrote into its input (numpy, then torch): input_mutated naming
    the input and the first changed index, stored by the daemon with the inputs as the block got them."""
    import torch  # lazy: only this test needs torch

    x = np.random.default_rng(3).uniform(-5, 5, (3, 70)).astype(np.float32)
    with validate_op(client, "softmax_client", inputs={"x": x}, seed=31, raise_on_failure=False) as ctx:
        out = numpy_softmax({"x": x})
        x *= 2  # in place: the reference would see other inputs than the op did
        ctx.set_output(out)
    assert ctx.result.kind == "input_mutated" and not ctx.result.passed
    assert "wrote into its input 'x': 210 elements changed, the first at x[0, 0]" in ctx.result.failures[0].message
    assert client.get_result(31).kind == "input_mutated"
    t = torch.from_numpy(np.random.default_rng(4).uniform(-5, 5, (2, 40)).astype(np.float32))
    with validate_op(client, "softmax_client", inputs={"x": t}, seed=32, raise_on_failure=False) as ctx:
        out = torch.softmax(t, -1)
        t[1, 7] = 0.5
        ctx.set_output(out)
    assert ctx.result.kind == "input_mutated", ctx.result
    assert "1 element changed, the first at x[1, 7]" in ctx.result.failures[0].message
    with validate_op(client, "softmax_client", inputs={"x": t}, seed=33) as ctx:  # the correct twin passes
        ctx.set_output(torch.softmax(t, -1))
    assert ctx.result.passed


def test_daemon_orchestrated_cases(client):
    case = client.get_test_case("matmul", seed=BIG_SEED)
    a, b = case["inputs"]["a"], case["inputs"]["b"]
    assert a.shape[1] == b.shape[0] and case["shapes"] == {"a": a.shape, "b": b.shape}
    result = client.submit_output("matmul", case["inputs"], a.astype(np.float64) @ b.astype(np.float64),
                                  seed=case["seed"], dtype=case["dtype"])
    assert result.passed, result.failures
    again = client.get_test_case("matmul", seed=BIG_SEED)
    assert again["seed"] == case["seed"] and np.array_equal(again["inputs"]["a"], a)

    schema = {"name": "matmul", "dims": [{"name": "M", "candidates": [3]}, {"name": "K", "min": 5, "max": 33},
                                         {"name": "N", "candidates": [2]}],
              "inputs": [{"name": "a", "dims": ["M", "K"]}, {"name": "b", "dims": ["K", 2]}],
              "output": {"name": "out", "dims": ["M", "N"]}}
    batch = client.get_test_batch("matmul", count=5, seed=9, op_schema=schema, dtypes=["float32"])
    assert len(batch) == 5 and len({c["seed"] for c in batch}) == 5
    for c in batch:
        assert c["inputs"]["a"].shape[0] == 3 and 5 <= c["inputs"]["a"].shape[1] <= 33
        assert c["inputs"]["b"].shape[1] == 2 and c["dtype"] == "float32"


def test_script_based_fuzz_reproduce_minimize(client):
    results = client.fuzz_op("softmax_tail_bug", seed=BIG_SEED, iterations=12, dtypes=["float32"])
    assert results.seed == BIG_SEED and results.total == 12
    assert results.failed > 0 and results.failed == len(results.failures)
    assert all(f.repro_info is not None for f in results.failures)
    # The largest: the corner cases come first and are minimal already (x [1, 1] cannot shrink).
    failure = max(results.failures, key=lambda f: math.prod(f.repro_info.shape))
    assert failure.kind == "mismatch"

    repro = client.reproduce(failure.seed)
    assert repro.reproduced and repro.result.seed == failure.seed and repro.result.kind == "mismatch"
    assert repro.inputs["x"].shape == failure.repro_info.shape

    small = client.minimize(failure.seed, max_iters=60)
    assert small.original_seed == failure.seed and small.minimized_seed != failure.seed
    assert math.prod(small.minimized_shape) <= math.prod(repro.inputs["x"].shape)
    assert not client.reproduce(small.minimized_seed).result.passed

    clean = client.fuzz_op("softmax", seed=3, iterations=6, fail_fast=True)
    assert clean.failed == 0 and clean.passed == 6


def test_client_side_fuzz_records_failures_for_replay(client):
    good = client.fuzz_op_client_side("softmax_client", run_op=numpy_softmax, iterations=8, seed=1)
    assert (good.total, good.passed) == (8, 8), [f.failures for f in good.failures]

    results = client.fuzz_op_client_side("softmax_client", run_op=softmax_tail_bug, iterations=12, seed=BIG_SEED)
    assert results.total == 12 and results.failed > 0, "the numpy tail bug must be caught"
    failure = results.failures[0]
    assert failure.kind == "mismatch"
    assert failure.seed in {f.seed for f in client.list_failures(limit=200)}

    case = [c for c in client.get_test_batch("softmax_client", count=12, seed=BIG_SEED) if c["seed"] == failure.seed][0]
    repro = client.reproduce(failure.seed)
    assert repro.needs_client and np.array_equal(repro.inputs["x"], case["inputs"]["x"])
    replayed = client.reproduce(failure.seed, run_op=softmax_tail_bug)
    assert replayed.reproduced and replayed.result.kind == "mismatch"
    assert client.reproduce(failure.seed, run_op=numpy_softmax).result.passed  # the fix passes on the same inputs

    small = client.minimize(failure.seed, run_op=softmax_tail_bug, strategy="all", max_iters=80)
    assert small.original_seed == failure.seed and not small.result.passed and small.result.kind == "mismatch"
    assert small.minimized_shape[-1] == 33 or math.prod(small.minimized_shape) < math.prod(case["shape"])
    stored = [f for f in client.list_failures(limit=200) if f.seed == small.minimized_seed]
    assert stored, "the minimal case is stored"


def test_reproduce_with_run_op_runs_it_even_when_the_op_names_a_module(client):
    # softmax_client_module names the examples' correct kernel as `module`; a replay with run_op must
    # judge run_op's output, never re-run the module in its place (which would report "passed").
    x = np.random.default_rng(5).uniform(-30, 30, (3, 70)).astype(np.float32)
    bad = client.validate_op("softmax_client_module", {"x": x}, softmax_tail_bug({"x": x}), seed=BIG_SEED - 7)
    assert not bad.passed and bad.kind == "mismatch"
    replayed = client.reproduce(BIG_SEED - 7, run_op=softmax_tail_bug)
    assert replayed.reproduced and not replayed.result.passed and replayed.result.kind == "mismatch"
    assert not replayed.needs_client
    assert client.reproduce(BIG_SEED - 7, run_op=numpy_softmax).result.passed


def test_client_side_guards_are_recorded(client):
    def in_place(inputs):
        x = inputs["x"]
        x -= x.max(axis=-1, keepdims=True)
        return softmax(x).astype(np.float32)

    mutated = client.fuzz_op_client_side("softmax_client", run_op=in_place, iterations=2, seed=4)
    assert {f.kind for f in mutated.failures} == {"input_mutated"}
    assert client.get_result(mutated.failures[0].seed).kind == "input_mutated"
    aliased = client.fuzz_op_client_side("softmax_client", run_op=lambda i: i["x"], iterations=1, seed=4)
    assert aliased.failures[0].kind == "output_aliased"
    crashed = client.fuzz_op_client_side("softmax_client", run_op=lambda i: 1 / 0, iterations=1, seed=4)
    assert crashed.failures[0].kind == "op_error" and "ZeroDivisionError" in crashed.failures[0].failures[0]


def test_calibrate_and_lint(client):
    rows = client.calibrate("softmax", dtype="float32", iterations=8)
    assert len(rows) == 1 and rows[0]["dtype"] == "float32" and rows[0]["fitted"]["atol"] > 0
    ptx = (REPO_ROOT / "tests" / "kernels" / "reduce_loop.ptx").read_text()
    kernels = client.lint_kernel(ptx)
    assert kernels and all({"kernel_name", "passed", "metrics", "violations", "timestamp"} <= set(k) for k in kernels)
    one = client.lint_kernel(ptx, kernel_name=kernels[0]["kernel_name"])
    assert [k["kernel_name"] for k in one] == [kernels[0]["kernel_name"]]


def test_protocol_mismatch_is_its_own_error(client, monkeypatch):
    monkeypatch.setattr(protocol, "PROTOCOL_VERSION", 2)
    with pytest.raises(ProtocolMismatchError, match="same gpuemu release"):
        client.ping()


def test_daemon_refuses_the_bad_vectors_and_keeps_serving(daemon):
    with pynng.Req0(dial=f"ipc://{daemon.socket}", recv_timeout=30000) as sock:
        for vector in VECTORS["bad"] + VECTORS["bad_requests"]:
            sock.send(bytes.fromhex(vector["hex"]))
            reply, _ = protocol.decode_message(sock.recv())
            assert reply["ok"] is False and reply["error"]["kind"] == vector["error_kind"], vector["name"]
        sock.send(bytes.fromhex(VECTORS["good"][0]["hex"]))  # ping
        assert protocol.decode_message(sock.recv())[0]["ok"] is True
