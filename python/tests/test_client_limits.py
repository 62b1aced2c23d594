# The client's counts and timeouts (issue 20, row 9): arguments the daemon would refuse are a
# ValueError naming the argument before anything is sent, and a long request's wait is capped at
# what pynng can express instead of overflowing in it (fuzz_op(iterations=1_000_000)).
import threading

import pynng
import pytest

from gpuemu import Client, DaemonError
from gpuemu._internal.client.client import MAX_TIMEOUT_MS
from gpuemu._internal.wire.protocol import decode_message, encode_frame


class CannedDaemon:
    """A real NNG REP socket that answers every request with one config error and keeps the
    request headers it got."""

    def __init__(self, path):
        self.url = f"ipc://{path}"
        self.headers = []
        self._sock = pynng.Rep0(listen=self.url, recv_timeout=20000)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self):
        try:
            while True:
                header, _ = decode_message(self._sock.recv())
                self.headers.append(header)
                self._sock.send(encode_frame({"ok": False, "type": "error", "protocol_version": 1,
                                              "request": header.get("type"),
                                              "error": {"kind": "config", "message": "canned answer"}}))
        except (pynng.Closed, pynng.Timeout):
            pass

    def close(self):
        self._sock.close()
        self._thread.join(timeout=10)


@pytest.fixture
def canned(tmp_path):
    server = CannedDaemon(tmp_path / "canned.sock")
    yield server
    server.close()


def test_a_million_fuzz_iterations_reach_the_daemon_without_overflowing_the_wait(canned, tmp_path):
    client = Client(socket_path=str(tmp_path / "canned.sock"), timeout_ms=30000, inline=False)
    # 30 s per 10 cases would be 3e9 ms: more than pynng's C int, an OverflowError before the fix.
    assert client._long_timeout(1_000_000) == MAX_TIMEOUT_MS
    with pytest.raises(DaemonError, match="canned answer"):
        client.fuzz_op("op", iterations=1_000_000, seed=1)
    assert canned.headers[-1]["iterations"] == 1_000_000
    with pytest.raises(DaemonError, match="canned answer"):
        client.calibrate("op", iterations=100_000)
    client.close()


@pytest.mark.parametrize("call, message", [
    (lambda c: c.fuzz_op("op", iterations=1_000_001), r"iterations must be an integer from 0 to 1_000_000, got 1000001"),
    (lambda c: c.fuzz_op("op", iterations=-1), r"iterations must be an integer from 0 to 1_000_000, got -1"),
    (lambda c: c.fuzz_op("op", iterations=True), r"iterations must be an integer .* got True"),
    (lambda c: c.fuzz_op("op", iterations=2.5), r"iterations must be an integer .* got 2.5"),
    (lambda c: c.calibrate("op", iterations=10**12), r"iterations must be an integer from 2 to 100_000"),
    (lambda c: c.minimize(1, max_iters=0), r"max_iters must be an integer from 1 to 100_000, got 0"),
])
def test_counts_the_daemon_would_refuse_are_value_errors_before_sending(canned, tmp_path, call, message):
    client = Client(socket_path=str(tmp_path / "canned.sock"), inline=False)
    with pytest.raises(ValueError, match=message):
        call(client)
    assert canned.headers == []
    client.close()


@pytest.mark.parametrize("timeout_ms", [0, -5, 2**31, 10**300, 1.5])
def test_a_timeout_pynng_cannot_express_is_refused_by_the_constructor(tmp_path, timeout_ms):
    with pytest.raises(ValueError, match=r"timeout_ms must be an integer from 1 to 2_147_483_647"):
        Client(socket_path=str(tmp_path / "none.sock"), timeout_ms=timeout_ms)
