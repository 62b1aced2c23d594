# Minimize through a real daemon (issue 19): no minimize request may end the daemon, whatever the
# strategy; and for every failing example op the minimized case still fails with the original's
# kind, is no larger in any dim, and replays from its own seed (the stored snapshot).
import os

import pytest

from gpuemu import Client

# The bundled examples' broken kernels, and the failure kind each one shows.
BROKEN = ["softmax_tail_bug", "matmul_acc_bug", "attention_no_scale", "flash_attention_no_rescale"]
STRATEGIES = ["binary-search-dims", "binary-search-values", "all"]


@pytest.fixture(scope="module")
def served(start_examples_daemon, tmp_path_factory):
    running = start_examples_daemon(tmp_path_factory.mktemp("minimize"))
    yield running
    running.stop()


@pytest.fixture
def client(served, monkeypatch):
    monkeypatch.chdir(served.project)
    with Client(socket_path=str(served.socket), timeout_ms=120000, inline=False) as c:
        yield c


def daemon_pid(served) -> int:
    return int((served.home / "gpuemu.pid").read_text().strip())


def no_larger(small: dict, big: dict) -> bool:
    return small.keys() == big.keys() and all(
        small[k].ndim == big[k].ndim and all(a <= b for a, b in zip(small[k].shape, big[k].shape)) for k in big)


@pytest.mark.parametrize("op", BROKEN)
def test_every_strategy_keeps_the_kind_shrinks_replays_and_the_daemon_serves_on(client, served, op):
    pid = daemon_pid(served)
    found = client.fuzz_op(op, seed=42, iterations=30, dtypes=["float32"])
    assert found.failures, f"{op} must fail"
    original = found.failures[0]
    before = client.reproduce(original.seed)
    for strategy in STRATEGIES:
        small = client.minimize(original.seed, strategy=strategy, max_iters=40)
        # The daemon is still there and answers.
        assert client.ping()["pid"] == pid
        os.kill(pid, 0)
        assert small.original_seed == original.seed
        assert small.result.kind == original.kind, (strategy, small.result.message)
        assert no_larger(small.inputs, before.inputs), strategy
        replay = client.reproduce(small.minimized_seed)
        assert replay.from_snapshot and replay.result.kind == original.kind, strategy
        assert {k: v.shape for k, v in replay.inputs.items()} == {k: v.shape for k, v in small.inputs.items()}
        if small.out_of_budget:
            assert small.stopped_in in ("dims", "values")
        else:
            assert small.stopped_in is None
