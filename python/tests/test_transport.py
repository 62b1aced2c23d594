# The client's transport against real NNG sockets that misbehave: one that never answers (a
# timeout with what to do), one whose process is killed mid-request (a clear error at once), and
# one that takes longer than NNG's 60 s resend interval (the request still goes once).
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pynng
import pytest

from gpuemu import Client, DaemonNotRunningError, RequestTimeoutError
from gpuemu._internal.wire.transport import NngTransport

SILENT_SERVER = """
import sys, time, pynng
rep = pynng.Rep0(listen="ipc://" + sys.argv[1])
print("ready", flush=True)
rep.recv()
print("got", flush=True)
time.sleep(120)
"""


def test_no_answer_is_a_timeout_naming_the_fix(tmp_path):
    sock = tmp_path / "silent.sock"
    with pynng.Rep0(listen=f"ipc://{sock}"):
        client = Client(socket_path=str(sock), timeout_ms=300)
        start = time.perf_counter()
        with pytest.raises(RequestTimeoutError, match=r"did not answer 'ping' within 300 ms.*gpuemu daemon status"):
            client.ping()
        assert 0.25 < time.perf_counter() - start < 5
        with pytest.raises(TimeoutError):  # RequestTimeoutError is also the builtin TimeoutError
            client.ping()
        client.close()


def test_a_daemon_killed_mid_request_is_reported_at_once(tmp_path):
    sock = tmp_path / "dies.sock"
    script = tmp_path / "server.py"
    script.write_text(textwrap.dedent(SILENT_SERVER))
    proc = subprocess.Popen([sys.executable, str(script), str(sock)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        client = Client(socket_path=str(sock), timeout_ms=60000)

        def kill_when_received():
            assert proc.stdout.readline().strip() == "got"
            os.kill(proc.pid, signal.SIGKILL)

        threading.Thread(target=kill_when_received, daemon=True).start()
        start = time.perf_counter()
        with pytest.raises(DaemonNotRunningError, match="went away while answering 'ping'"):
            client.ping()
        assert time.perf_counter() - start < 10, "must not wait for timeout_ms (60 s)"
        with pytest.raises(DaemonNotRunningError, match="gpuemu daemon start"):
            client.ping()  # the socket file is stale now: refused at once
    finally:
        proc.kill()
        proc.wait()


def test_the_socket_never_resends_a_request(tmp_path):
    sock = tmp_path / "idle.sock"
    with pynng.Rep0(listen=f"ipc://{sock}"):
        transport = NngTransport(str(sock), timeout_ms=1000)
        assert transport.available()
        assert transport._socket.resend_time == -1  # NNG's default is 60000 ms
        transport.close()


def test_a_request_answered_after_65_s_was_sent_once(tmp_path):
    """NNG's REQ socket resends after 60 s unless told not to; the daemon would then run a long fuzz
    twice. The server waits for a second copy of the request until 65 s, then answers. One test that
    long (it sleeps, costing no CPU); the one above checks the option at once."""
    sock = tmp_path / "slow.sock"
    copies = []
    with pynng.Rep0(listen=f"ipc://{sock}") as rep:
        def serve():
            copies.append(rep.recv())
            rep.recv_timeout = 65000
            try:
                copies.append(rep.recv())  # a resent copy (same request id): answering it answers the client
            except pynng.Timeout:
                pass
            rep.send(b"answer")

        server = threading.Thread(target=serve, daemon=True)
        server.start()
        transport = NngTransport(str(sock), timeout_ms=120000)
        assert transport.request(b"long request", "'fuzz'") == b"answer"
        server.join(timeout=10)
        transport.close()
    assert copies == [b"long request"], f"the request arrived {len(copies)} times"
