"""End-to-end: the daemon through the real binary and a real NNG socket (docs/protocol.md):
start/status/stop, refusing a second start, private permissions, ping while a long fuzz runs,
--daemon giving the in-process output, malformed messages fuzzed (the daemon survives), SIGTERM."""
import json
import os
import pathlib
import random
import shutil
import signal
import stat
import struct
import subprocess
import tempfile
import threading
import time

import pytest

from e2e_support import REPO

pynng = pytest.importorskip("pynng", reason="pip install pynng (scripts/install-deps.sh)")

EXAMPLES = REPO / "examples"
VECTORS = json.loads((REPO / "tests" / "vectors" / "protocol" / "messages.json").read_text())


def without_clock(doc):
    """A result document minus its wall-clock fields (duration, timing), which differ between runs."""
    doc = {k: v for k, v in doc.items() if k not in ("duration_secs", "timing")}
    if "ops" in doc:  # `reproduce --format json` prints one case record, which has none
        doc["ops"] = [{k: v for k, v in op.items() if k != "timing"} for op in doc["ops"]]
    return doc


def frame(header, payload=b""):
    text = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
    return struct.pack("<4sIIQ", b"GEMU", 1, len(text), len(payload)) + text + payload


def unframe(raw):
    magic, version, hlen, plen = struct.unpack_from("<4sIIQ", raw)
    assert magic == b"GEMU" and version == 1 and 20 + hlen + plen == len(raw)
    return json.loads(raw[20:20 + hlen]), raw[20 + hlen:]


class Daemon:
    """A GPUEMU_HOME of its own (short path: Unix socket paths are limited) and the binary."""

    def __init__(self, binary, workdir):
        self.binary = binary
        self.workdir = workdir
        self.home = pathlib.Path(tempfile.mkdtemp(prefix="ged", dir="/tmp")) / "h"
        self.env = dict(os.environ, GPUEMU_HOME=str(self.home), HOME=str(workdir))
        self.url = f"ipc://{self.home}/gpuemu.sock"

    def run(self, *args, timeout=300):
        return subprocess.run([str(self.binary), *args], cwd=self.workdir, env=self.env, capture_output=True,
                              text=True, timeout=timeout)

    def start(self, *args):
        proc = self.run(*args, "daemon", "start", "--background", "--format", "json", timeout=120)
        assert proc.returncode == 0, proc.stderr + proc.stdout
        self.pid = json.loads(proc.stdout)["pid"]
        return self.pid

    def request(self, header, payload=b"", timeout_ms=120000):
        with pynng.Req0(dial=self.url, recv_timeout=timeout_ms, send_timeout=timeout_ms, resend_time=-1) as sock:
            sock.send(frame({"protocol_version": 1, **header}, payload))
            return unframe(sock.recv())[0]

    def raw(self, data, sock):
        sock.send(data)
        return unframe(sock.recv())[0]

    def alive(self):
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        # A zombie counts as gone.
        try:
            return pathlib.Path(f"/proc/{self.pid}/stat").read_text().split()[2] != "Z"
        except FileNotFoundError:
            return False

    def cleanup(self):
        self.run("daemon", "stop", timeout=120)
        shutil.rmtree(self.home.parent, ignore_errors=True)


@pytest.fixture
def daemon(gpuemu_bin, tmp_path):
    d = Daemon(gpuemu_bin, tmp_path)
    yield d
    d.cleanup()


def test_start_status_refuse_twice_permissions_stop(daemon):
    pid = daemon.start()
    assert stat.S_IMODE(daemon.home.stat().st_mode) == 0o700
    assert stat.S_IMODE((daemon.home / "gpuemu.sock").stat().st_mode) == 0o600
    assert (daemon.home / "gpuemu.pid").read_text().strip() == str(pid)

    status = daemon.run("daemon", "status", "--format", "json")
    assert status.returncode == 0, status.stderr
    doc = json.loads(status.stdout)
    assert doc["running"] and doc["pid"] == pid and doc["protocol_version"] == 1

    again = daemon.run("daemon", "start", "--background")
    assert again.returncode == 2
    assert "already running" in again.stderr and str(pid) in again.stderr
    foreground = daemon.run("daemon", "start", timeout=60)
    assert foreground.returncode == 2 and "already running" in foreground.stderr

    stop = daemon.run("daemon", "stop")
    assert stop.returncode == 0 and f"pid {pid}" in stop.stdout
    assert not daemon.alive()
    assert not (daemon.home / "gpuemu.sock").exists() and not (daemon.home / "gpuemu.pid").exists()
    gone = daemon.run("daemon", "status")
    assert gone.returncode == 1 and "not running" in gone.stdout
    logs = daemon.run("daemon", "logs", "-n", "0")
    assert "listening on" in logs.stdout and "stopped after serving" in logs.stdout


def test_ping_and_shutdown_request(daemon):
    daemon.start()
    reply = daemon.request({"type": "ping", "id": "abc"})
    assert reply["ok"] and reply["type"] == "ping" and reply["id"] == "abc"
    assert reply["protocol_version"] == 1 and reply["uptime_secs"] >= 0 and reply["version"]
    assert daemon.request({"type": "shutdown"})["ok"]
    deadline = time.time() + 30
    while daemon.alive() and time.time() < deadline:
        time.sleep(0.05)
    assert not daemon.alive()


def test_malformed_messages_never_stop_the_daemon(daemon):
    daemon.start()
    rng = random.Random(8)
    seeds = [bytes.fromhex(v["hex"]) for v in VECTORS["good"] + VECTORS["bad"] + VECTORS["bad_requests"]]
    with pynng.Req0(dial=daemon.url, recv_timeout=30000, send_timeout=30000) as sock:
        for v in VECTORS["bad"] + VECTORS["bad_requests"]:
            reply = daemon.raw(bytes.fromhex(v["hex"]), sock)
            assert reply["ok"] is False and reply["error"]["kind"] == v["error_kind"], v["name"]
        for _ in range(300):
            data = bytearray(rng.choice(seeds))
            for _ in range(rng.randint(1, 4)):
                op = rng.random()
                if op < 0.5 and data:
                    data[rng.randrange(len(data))] = rng.randrange(256)
                elif op < 0.75:
                    del data[rng.randrange(len(data) + 1):]
                else:
                    data += bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
            reply = daemon.raw(bytes(data), sock)
            assert isinstance(reply, dict) and "ok" in reply
        assert daemon.raw(frame({"protocol_version": 1, "type": "ping"}), sock)["ok"]
    assert daemon.alive()


def test_fuzz_runs_while_ping_answers_and_daemon_output_matches_in_process(daemon):
    # Fewer workers than concurrent fuzzes: long requests get threads of their own, so ping still answers.
    daemon.env["GPUEMU_DAEMON_WORKERS"] = "2"
    daemon.start("--config", str(EXAMPLES / "gpuemu.toml"))
    result = {}

    def long_fuzz(i):
        result[i] = daemon.request({"type": "fuzz", "op": "softmax_tail_bug", "seed": "5", "iterations": 12},
                                   timeout_ms=600000)

    workers = [threading.Thread(target=long_fuzz, args=(i,)) for i in range(3)]
    for w in workers:
        w.start()
    latencies = []
    while any(w.is_alive() for w in workers):
        started = time.perf_counter()
        assert daemon.request({"type": "ping"}, timeout_ms=5000)["ok"]
        latencies.append(time.perf_counter() - started)
        time.sleep(0.02)
    for w in workers:
        w.join()
    assert all(result[i]["ok"] and result[i]["total"] == 12 for i in range(3)), result
    reply = result[0]
    assert reply["ok"], reply
    assert reply["total"] == 12 and reply["failed"] >= 1 and reply["failures"][0]["stored"]
    assert len(latencies) >= 3 and max(latencies) < 2.0, latencies

    # The CLI through the daemon prints what the in-process run prints.
    args = ("fuzz", "softmax_tail_bug", "--seed", "5", "-n", "6", "--format", "json")
    config = ("--config", str(EXAMPLES / "gpuemu.toml"))
    via_daemon = daemon.run(*config, "--daemon", *args)
    in_process = daemon.run(*config, *args)
    assert via_daemon.returncode == in_process.returncode == 1, via_daemon.stderr
    a, b = without_clock(json.loads(via_daemon.stdout)), without_clock(json.loads(in_process.stdout))
    assert a == b

    seed = b["ops"][0]["failures"][0]["seed"]
    repro_daemon = daemon.run(*config, "--daemon", "reproduce", seed, "--format", "json")
    repro_local = daemon.run(*config, "reproduce", seed, "--format", "json")
    assert repro_daemon.returncode == repro_local.returncode == 1, repro_daemon.stderr
    assert without_clock(json.loads(repro_daemon.stdout)) == without_clock(json.loads(repro_local.stdout))


def test_sigterm_finishes_and_cleans_up(daemon):
    pid = daemon.start()
    assert daemon.request({"type": "ping"})["ok"]
    os.kill(pid, signal.SIGTERM)
    deadline = time.time() + 30
    while daemon.alive() and time.time() < deadline:
        time.sleep(0.05)
    assert not daemon.alive()
    assert not (daemon.home / "gpuemu.sock").exists() and not (daemon.home / "gpuemu.pid").exists()
    log = (daemon.home / "logs" / "daemon.log").read_text()
    assert "received signal 15" in log and "stopped after serving" in log
    # A daemon killed with -9 leaves its files behind; the next start takes over cleanly.
    pid = daemon.start()
    os.kill(pid, signal.SIGKILL)
    deadline = time.time() + 10
    while daemon.alive() and time.time() < deadline:
        time.sleep(0.05)
    daemon.start()
    assert daemon.request({"type": "ping"})["ok"]


def test_no_daemon_is_a_clear_error(daemon):
    proc = daemon.run("--config", str(EXAMPLES / "gpuemu.toml"), "--daemon", "fuzz", "softmax", "-n", "1")
    assert proc.returncode == 3
    assert "gpuemu daemon start" in proc.stderr


def test_lint_and_calibrate_requests(daemon):
    daemon.start("--config", str(EXAMPLES / "gpuemu.toml"))
    kernels = REPO / "tests" / "kernels"
    spilling = daemon.request({"type": "lint", "ptx": (kernels / "saxpy_local.ptx").read_text()})
    assert spilling["ok"], spilling
    assert spilling["kernels"] and {"kernel_name", "metrics", "violations", "passed"} <= set(spilling["kernels"][0])
    assert spilling["passed"] is False and spilling["kernels"][0]["violations"]
    clean = daemon.request({"type": "lint", "ptx": (kernels / "saxpy.ptx").read_text()})
    assert clean["ok"] and clean["passed"] is True, clean
    bad = daemon.request({"type": "lint", "ptx": "this is not ptx"})
    assert bad["ok"] is False and bad["error"]["message"]

    rows = daemon.request({"type": "calibrate", "op": "softmax", "dtype": "float32", "iterations": 4, "seed": "3"},
                          timeout_ms=300000)
    assert rows["ok"], rows
    # The cases are spread over softmax's 3 strata (3 value kinds, one layout), so 4 iterations
    # round up to 2 per stratum (docs/commands.md, calibrate), each stratum fitted on its own.
    assert rows["rows"][0]["dtype"] == "float32" and rows["rows"][0]["cases"] == 6
    assert [s["cases"] for s in rows["rows"][0]["strata"]] == [2, 2, 2]
    assert rows["rows"][0]["fitted"]["atol"] > 0

    # A fuzz with a client-supplied op under test: the fixed kernel in place of the buggy one passes.
    fixed = daemon.request({"type": "fuzz", "op": "softmax_tail_bug", "op_script": "kernels/softmax.py", "seed": "5",
                            "iterations": 6, "dtypes": ["float32"]}, timeout_ms=300000)
    assert fixed["ok"] and fixed["total"] == 6 and fixed["failed"] == 0, fixed
    missing = daemon.request({"type": "fuzz", "op": "softmax", "op_script": "kernels/nope.py"})
    assert missing["ok"] is False and missing["error"]["kind"] == "bad_request" and "nope.py" in missing["error"]["message"]


def test_sigterm_during_a_fuzz_keeps_every_stored_failure(daemon):
    daemon.start("--config", str(EXAMPLES / "gpuemu.toml"))
    outcome = {}

    def long_fuzz():
        try:
            outcome["reply"] = daemon.request({"type": "fuzz", "op": "softmax_tail_bug", "seed": "11",
                                               "iterations": 400, "dtypes": ["float32"]}, timeout_ms=120000)
        except Exception as exc:  # the daemon may close the socket before its reply arrives
            outcome["error"] = exc

    worker = threading.Thread(target=long_fuzz)
    worker.start()
    db = daemon.home / "db" / "gpuemu.db"
    deadline = time.time() + 60
    while time.time() < deadline:  # wait until failures are being stored
        listed = daemon.request({"type": "list_failures", "limit": 5})
        if listed["ok"] and len(listed["failures"]) >= 2:
            break
        time.sleep(0.05)
    os.kill(daemon.pid, signal.SIGTERM)
    worker.join(timeout=90)
    assert not worker.is_alive()
    deadline = time.time() + 30
    while daemon.alive() and time.time() < deadline:
        time.sleep(0.05)
    assert not daemon.alive(), "the daemon must stop soon after SIGTERM, not finish 400 cases"
    reply = outcome.get("reply")
    assert reply is None or (reply["ok"] is False and reply["error"]["kind"] == "shutting_down") or reply["total"] < 400
    import sqlite3
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = conn.execute("SELECT COUNT(*) FROM failures").fetchone()[0]
    assert stored >= 2
