"""End-to-end: the daemon's handlers fuzzed with well-framed requests (issue 19: no request may end
the daemon). Every request type except shutdown gets headers whose fields are drawn from a pool of
wrong types, out-of-range numbers, unknown names and real stored seeds; each must get a reply
(ok, or an error with a kind and a message), and the daemon must still answer ping at the end."""
import json
import random

import pytest

from test_daemon import EXAMPLES, Daemon, frame, unframe  # noqa: F401  (the daemon helpers)

pynng = pytest.importorskip("pynng", reason="pip install pynng (scripts/install-deps.sh)")

TYPES = ["ping", "validate", "submit_output", "get_test_case", "get_test_batch", "fuzz", "test", "reproduce",
         "minimize", "get_result", "list_results", "list_failures", "store_baseline", "calibrate", "lint"]
FIELDS = ["seed", "op", "cases", "start", "strategy", "max_iters", "iterations", "dtype", "dtypes", "layouts", "values", "inputs",
          "output", "kwargs", "limit", "tag", "ptx", "kernel", "arch", "against", "fail_fast", "count",
          "op_schema", "minimized_from", "run_id", "jobs", "op_script"]
OPS = ["softmax_tail_bug", "matmul_acc_bug", "softmax", "attention_no_scale", "nope"]
SMALL = {"iterations": 2, "max_iters": 3, "count": 2, "limit": 3, "cases": 1}


@pytest.fixture
def daemon(gpuemu_bin, tmp_path):
    d = Daemon(gpuemu_bin, tmp_path)
    yield d
    d.cleanup()


def pool(seeds):
    return [None, True, False, 0, -1, 1, 3, 2**64, -2**63, 1e308, -0.5, "", "x", "all", "values", "dims",
            "float32", "bfloat16", "int64", "transposed", "adversarial", "18446744073709551615", "-1", "007",
            [], {}, [1, 2], [[1]], {"x": 1}, {"x": {"shape": [2], "dtype": "float32"}}, "a" * 5000,
            *OPS, *seeds, *[int(s) for s in seeds]]


def test_random_requests_to_every_handler_get_replies_and_the_daemon_serves_on(daemon):
    daemon.start("--config", str(EXAMPLES / "gpuemu.toml"))
    stored = daemon.request({"type": "fuzz", "op": "matmul_acc_bug", "seed": "42", "iterations": 6}, timeout_ms=600000)
    assert stored["ok"] and stored["failures"], stored
    seeds = [f["seed"] for f in stored["failures"]][:3]
    values = pool(seeds)
    rng = random.Random(19)
    kinds = set()
    with pynng.Req0(dial=daemon.url, recv_timeout=600000, send_timeout=30000, resend_time=-1) as sock:
        for i in range(160):
            kind = rng.choice(TYPES)
            header = {"protocol_version": 1, "type": kind, "op": rng.choice(OPS), "seed": rng.choice(seeds), **SMALL}
            for field in rng.sample(FIELDS, rng.randint(1, 5)):
                value = rng.choice(values)
                if field in SMALL and isinstance(value, int) and not isinstance(value, bool) and value > 3:
                    value = SMALL[field]  # keep the request short; huge values are tried on other fields
                header[field] = value
            try:
                sock.send(frame(header))
                reply = unframe(sock.recv())[0]
            except pynng.exceptions.NNGException as e:  # pragma: no cover - the failure we test for
                pytest.fail(f"request {i} {json.dumps(header)[:300]} got no reply: {e}")
            assert isinstance(reply, dict) and isinstance(reply.get("ok"), bool), reply
            if not reply["ok"]:
                assert reply["error"]["kind"] and reply["error"]["message"], reply
                kinds.add(reply["error"]["kind"])
        assert unframe((sock.send(frame({"protocol_version": 1, "type": "ping"})), sock.recv())[1])[0]["ok"]
    assert daemon.alive()
    assert "internal" not in kinds, "a handler threw: see the daemon log"
