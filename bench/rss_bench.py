#!/usr/bin/env python3
# Benchmark (h) of issue 20: the daemon's resident memory over 10,000 mixed requests (validate,
# get_test_batch, fuzz, ping and requests that fail) must stay flat: the last 1,000 within 10% of the first.
"""python3 bench/rss_bench.py [--requests N]  (or bench/run.py --only h)

Starts a daemon (its own GPUEMU_HOME) on a small client-side/script project, sends N requests from
one client in a fixed cycle of 100 (SCHEDULE), and reads the daemon's VmRSS from /proc after every reply.
Prints the mean RSS of the first and the last 10% of the requests and their ratio."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "python"))

from bench_lib import Row, gpuemu_bin, log, print_table  # noqa: E402
from daemon_bench import REFS, Daemon  # noqa: E402

# Warm module:function references and ops (cheap, so the requests are many) and the schema limits
# that the over-limit requests hit.
PROJECT = """[project]
name = "bench-rss"

[validation]
dtypes = ["float32"]
timeout = 60
max_case_elements = 1048576

[[ops]]
name = "ident"
execution_mode = "client_side"
reference = "bench_refs:identity"

[ops.schema]
dims = { M = [1, 64], N = [1, 256] }
inputs = { x = ["M", "N"] }
output = ["M", "N"]

[[ops]]
name = "fz"
op_script = "bench_refs:identity"
reference = "bench_refs:identity"

[ops.schema]
dims = { M = [1, 16], N = [1, 64] }
inputs = { x = ["M", "N"] }
output = ["M", "N"]
"""

KINDS = ("ping", "validate", "validate_failing", "validate_256k", "get_test_batch", "fuzz",
         "error_unknown_op", "error_malformed", "error_over_limit", "error_bad_field")
# One cycle of 100 requests. A fuzz starts its own two warm workers (a Python start-up each, about
# a second in all), so it is one request in 100; the rest are the short requests a client sends most.
SCHEDULE = (["validate"] * 42 + ["validate_failing"] * 10 + ["validate_256k"] * 8 + ["ping"] * 10
            + ["get_test_batch"] * 10 + ["fuzz"] + ["error_unknown_op"] * 6 + ["error_malformed"] * 6
            + ["error_over_limit"] * 4 + ["error_bad_field"] * 3)
# Interleaved (37 is coprime with 100) so every stretch of requests has about the same mix.
SCHEDULE = [SCHEDULE[(i * 37) % len(SCHEDULE)] for i in range(len(SCHEDULE))]


def vm_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


class Mix:
    """The requests of SCHEDULE in turn; every reply is checked for what it must say."""

    def __init__(self, client):
        from gpuemu.wire import protocol

        self.client = client
        self.protocol = protocol
        self.rng = np.random.default_rng(1)
        self.sent = {k: 0 for k in KINDS}
        self.seconds = {k: 0.0 for k in KINDS}

    def send(self, header: dict, tensors: dict | None = None) -> dict:
        header = {"protocol_version": self.protocol.PROTOCOL_VERSION, **header}
        raw = self.client._transport.request(lambda seg: self.protocol.encode_message(header, tensors, seg),
                                             header.get("type", "?"))
        return self.protocol.decode_message(raw)[0]

    def expect(self, reply: dict, ok: bool, kind: str, what: str) -> None:
        if reply.get("ok") is not ok or (not ok and reply["error"]["kind"] != kind):
            raise SystemExit(f"bench: {what}: unexpected reply {json.dumps(reply)[:400]}")

    def one(self, i: int) -> None:
        kind = SCHEDULE[i % len(SCHEDULE)]
        self.sent[kind] += 1
        started = time.perf_counter()
        self.request(kind, i)
        self.seconds[kind] += time.perf_counter() - started

    def request(self, kind: str, i: int) -> None:
        seed = str(i + 1)
        if kind == "ping":
            self.expect(self.send({"type": "ping"}), True, "", kind)
        elif kind in ("validate", "validate_failing", "validate_256k"):
            x = self.rng.standard_normal((256, 256) if kind == "validate_256k" else (4, 33), dtype=np.float32)
            out = x + np.float32(1) if kind == "validate_failing" else x.copy()
            reply = self.send({"type": "validate", "op": "ident", "seed": seed, "dtype": "float32"},
                              {"input/x": x, "output/out": out})
            self.expect(reply, True, "", kind)
            if reply["result"]["passed"] is (kind == "validate_failing"):
                raise SystemExit(f"bench: {kind}: wrong verdict {reply['result']}")
        elif kind == "get_test_batch":
            reply = self.send({"type": "get_test_batch", "op": "ident", "seed": seed, "count": 4})
            self.expect(reply, True, "", kind)
        elif kind == "fuzz":
            reply = self.send({"type": "fuzz", "op": "fz", "seed": seed, "iterations": 4})
            self.expect(reply, True, "", kind)
            if reply["total"] != 4 or reply["failed"] != 0:
                raise SystemExit(f"bench: fuzz of an identity op: {reply['total']} cases, {reply['failed']} failed")
        elif kind == "error_unknown_op":
            x = np.ones((2, 2), dtype=np.float32)
            self.expect(self.send({"type": "validate", "op": "nope", "seed": seed}, {"input/x": x, "output/out": x}),
                        False, "config", kind)
        elif kind == "error_malformed":
            raw = self.client._transport.request(b"GEMU\x01\x00\x00\x00\xff\xff\x00\x00" + bytes(8) + b"{", kind)
            self.expect(self.protocol.decode_message(raw)[0], False, "bad_message", kind)
        elif kind == "error_over_limit":
            # 4 payload bytes viewed as [2^21, 1] with zero strides: over max_case_elements, refused unread.
            entry = {"name": "input/x", "dtype": "float32", "shape": [1 << 21, 1], "strides": [0, 1],
                     "offset": 0, "nbytes": 4}
            out = {"name": "output/out", "dtype": "float32", "shape": [1], "offset": 0, "nbytes": 4}
            header = {"protocol_version": self.protocol.PROTOCOL_VERSION, "type": "validate", "op": "ident",
                      "tensors": [entry, out]}
            raw = self.client._transport.request(self.protocol.encode_frame(header, bytes(4)), kind)
            self.expect(self.protocol.decode_message(raw)[0], False, "bad_request", kind)
        else:  # error_bad_field
            self.expect(self.send({"type": "fuzz", "op": "fz", "values": "sideways"}), False, "bad_request", kind)


def bench_rss(binary: Path, work: Path, requests: int) -> list[Row]:
    """(h) daemon RSS over `requests` mixed requests: the mean of the last 10% against the first 10%."""
    daemon = Daemon(binary, work)
    daemon.config.parent.mkdir(parents=True, exist_ok=True)
    (daemon.config.parent / "bench_refs.py").write_text(REFS)
    daemon.config.write_text(PROJECT)
    daemon.start()
    try:
        with daemon.client(timeout_ms=120_000) as client:
            pid = client.ping()["pid"]
            mix = Mix(client)
            rss = []
            started = time.perf_counter()
            for i in range(requests):
                mix.one(i)
                rss.append(vm_rss(pid))
                if (i + 1) % 1000 == 0:
                    log(f"rss: {i + 1} requests, daemon RSS {rss[-1] / 2**20:.1f} MiB")
            took = time.perf_counter() - started
            peak = int(next(line.split()[1] for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                            if line.startswith("VmHWM:"))) * 1024
    finally:
        daemon.stop()
    tenth = max(1, requests // 10)
    first, last = statistics.mean(rss[:tenth]), statistics.mean(rss[-tenth:])
    ratio = last / first
    mib = 2**20
    return [Row(f"(h) daemon RSS over {requests:,} mixed requests", f"{last / mib:.1f} MiB (last {tenth:,})",
                f"{first / mib:.1f} MiB (first {tenth:,})", ratio, "<= 1.10x", ratio <= 1.10,
                note=f"{requests / took:,.0f} requests/s; RSS min {min(rss) / mib:.1f}, max {max(rss) / mib:.1f}, "
                     f"peak (VmHWM) {peak / mib:.1f} MiB; after request 1,000: {rss[min(999, requests - 1)] / mib:.1f}"
                     f" MiB; requests (seconds in all): "
                     f"{', '.join(f'{k} {n} ({mix.seconds[k]:.1f} s)' for k, n in mix.sent.items())}")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpuemu-bench-rss-") as tmp:
        rows = bench_rss(gpuemu_bin(), Path(tmp), args.requests)
    print_table(rows)
    return 0 if all(r.met is not False for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
