# The client's transport against real NNG sockets that misbehave: one that never answers (a
# timeout with what to do) and one whose process is killed mid-request (a clear error at once).
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
