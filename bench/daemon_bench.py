# Benchmarks (d), (e) and (f) of issue 8, against a real daemon with its own GPUEMU_HOME: ping
# latency alone and under load, validate_op throughput against a numpy copy, and a load run.
"""The daemon benchmarks; bench/run.py starts one daemon for all of them and stops it at the end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from bench_lib import Row, Timing, fmt_bytes_rate, log, percentile, python_env, run_checked

HERE = Path(__file__).resolve().parent
REFS = '''"""Cheap references for the daemon benchmarks, so the numbers measure gpuemu, not the math."""


def identity(inputs, **kwargs):
    return inputs["x"]
'''


def daemon_project(root: Path) -> Path:
    """A client-side project: ops 'ident' and 'load' whose reference returns its input (warm)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "bench_refs.py").write_text(REFS)
    ops = "".join(f"""
[[ops]]
name = "{name}"
execution_mode = "client_side"
reference = "bench_refs:identity"

[ops.schema]
dims = {{ M = [1, 4096], N = [1, 4096] }}
inputs = {{ x = ["M", "N"] }}
output = ["M", "N"]

[ops.tolerances]
float32 = {{ atol = 1e-6, rtol = 1e-5 }}
""" for name in ("ident", "load"))
    config = root / "gpuemu.toml"
    config.write_text(f'[project]\nname = "bench-daemon"\n\n[validation]\ndtypes = ["float32"]\ntimeout = 300\n{ops}')
    return config


class Daemon:
    """`gpuemu daemon start --background` in a private GPUEMU_HOME; stop() always runs."""

    def __init__(self, binary: Path, work: Path):
        self.binary = binary
        self.home = work / "home"
        self.config = daemon_project(work / "project")
        self.env = python_env(self.home)
        self.socket = str(self.home / "gpuemu.sock")

    def start(self) -> None:
        run_checked([str(self.binary), "--config", str(self.config), "daemon", "start", "--background"], self.env,
                    self.config.parent, timeout=120)
        from gpuemu import Client

        deadline = time.monotonic() + 60
        while True:
            try:
                with Client(socket_path=self.socket, timeout_ms=2000, config=str(self.config), inline=False) as c:
                    c.ping()
                return
            except Exception:  # noqa: BLE001 - not up yet
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def stop(self) -> None:
        subprocess.run([str(self.binary), "daemon", "stop"], env=self.env, cwd=self.config.parent,
                       capture_output=True, timeout=120)

    def client(self, timeout_ms: int = 300_000):
        from gpuemu import Client

        return Client(socket_path=self.socket, timeout_ms=timeout_ms, config=str(self.config), inline=False)

    def spawn_client(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, str(HERE / "load_client.py"), self.socket, str(self.config), *args],
                                env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def ping_latencies(client, count: int) -> list[float]:
    out = []
    for _ in range(count):
        start = time.perf_counter()
        client.ping()
        out.append(time.perf_counter() - start)
    return out


def bench_ping(daemon: Daemon, quick: bool) -> list[Row]:
    """(d) ping p50/p99 alone, then while 8 client processes validate small tensors."""
    count = 300 if quick else 2000
    with daemon.client() as client:
        ping_latencies(client, 50)
        alone = ping_latencies(client, count)
        stop_file = daemon.home.parent / "stop-load"
        stop_file.unlink(missing_ok=True)
        loaders = [daemon.spawn_client("ident", "--until-file", str(stop_file)) for _ in range(8)]
        try:
            for p in loaders:  # each says "ready" on stderr after its first answered request
                if p.stderr.readline().strip() != "ready":
                    raise SystemExit(f"bench: a load client did not start: {p.communicate()}")
            loaded = ping_latencies(client, count)
        finally:
            stop_file.touch()
            summaries = [json.loads(p.communicate(timeout=300)[0]) for p in loaders]
    errors = sum(s["errors"] for s in summaries)
    load_requests = sum(s["requests"] for s in summaries)
    p50a, p99a = percentile(alone, 50) * 1e3, percentile(alone, 99) * 1e3
    p50l, p99l = percentile(loaded, 50) * 1e3, percentile(loaded, 99) * 1e3
    rows = [
        Row("(d) daemon ping, alone", f"p50 {p50a:.3f} ms, p99 {p99a:.3f} ms", "", None,
            note=f"{count} pings from one client"),
        Row("(d) daemon ping, 8 clients validating", f"p50 {p50l:.3f} ms, p99 {p99l:.3f} ms",
            f"p50 {p50a:.3f} ms (alone)", p50l / p50a, note=f"p99 ratio {p99l / p99a:.3g}x; the 8 load clients sent "
                                                             f"{load_requests} validate requests, {errors} errors"),
    ]
    if errors:
        rows[-1].note += f"; first errors: {summaries[0]['first_errors']}"
    return rows


def bench_validate(daemon: Daemon, quick: bool) -> list[Row]:
    """(e) validate_op throughput for 1 MiB and 64 MiB float32 tensors against a numpy copy of the
    same bytes (the input and the output the request carries), paired repeat by repeat."""
    rows = []
    with daemon.client() as client:
        # The floor of any request: an empty ping, and a validate of a 4x33 tensor (two processes,
        # NNG, the reference worker, SQLite), measured here so the 1 MiB budget can be set against them.
        ping_p50 = float(np.median(ping_latencies(client, 200))) * 1e3
        small = np.ones((4, 33), dtype=np.float32)
        client.validate_op("ident", {"x": small}, small, dtype="float32", seed=1)
        floor = Timing()
        for i in range(40):
            start = time.perf_counter()
            client.validate_op("ident", {"x": small}, small, dtype="float32", seed=10_000 + i)
            floor.samples.append(time.perf_counter() - start)
        for label, shape, repeats in (("1 MiB", (512, 512), 10 if quick else 40),
                                      ("64 MiB", (4096, 4096), 2 if quick else 5)):
            rng = np.random.default_rng(1)
            x = rng.standard_normal(shape, dtype=np.float32)
            out = x.copy()
            dst_x, dst_out = np.empty_like(x), np.empty_like(out)
            np.copyto(dst_x, x)  # fault the destination pages in: the baseline is the copy alone
            np.copyto(dst_out, out)
            nbytes = x.nbytes + out.nbytes
            client.validate_op("ident", {"x": x}, out, dtype="float32", seed=1)  # warm the reference worker
            val, cpy, ratios = Timing(), Timing(), []
            for i in range(repeats):
                start = time.perf_counter()
                result = client.validate_op("ident", {"x": x}, out, dtype="float32", seed=i + 2)
                t_val = time.perf_counter() - start
                if not result.passed:
                    raise SystemExit(f"bench: validate of an identity output failed: {result}")
                start = time.perf_counter()
                np.copyto(dst_x, x)
                np.copyto(dst_out, out)
                t_cpy = time.perf_counter() - start
                val.samples.append(t_val)
                cpy.samples.append(t_cpy)
                ratios.append(t_cpy / t_val)
            ratio = float(np.median(ratios))
            rows.append(Row(f"(e) validate_op {label} float32", fmt_bytes_rate(nbytes / val.median),
                            fmt_bytes_rate(nbytes / cpy.median) + " (numpy copy)", ratio, ">= 0.25x", ratio >= 0.25,
                            note=f"{repeats} requests; median {val.median * 1e3:.1f} ms (min {val.min * 1e3:.1f} ms) "
                                 f"for {nbytes / 2**20:.0f} MiB of input+output; copy {cpy.median * 1e3:.2f} ms; "
                                 f"0.25x allows {cpy.median * 4e3:.2f} ms per request, against an empty ping's "
                                 f"{ping_p50:.3f} ms and a 4x33 validate's {floor.median * 1e3:.2f} ms in this run"))
            rows.append(validate_breakdown(client, label, x, out, max(2, repeats // 2), val.median))
    return rows


def validate_breakdown(client, label: str, x: np.ndarray, out: np.ndarray, repeats: int, total: float) -> Row:
    """Where a validate request's time goes: the client's encoding (large tensors copied into its
    shared-memory segment), the same message to the daemon and back in a ping (transport and the
    daemon's decoding, which maps the segment), and the daemon's own duration_ms (the reference's warm
    worker and the comparison); the rest is the store, the reply and decoding it."""
    from gpuemu.wire import protocol, segments

    tensors = {"input/x": x, "output/out": out}
    header = {"protocol_version": protocol.PROTOCOL_VERSION, "type": "ping"}
    encode, ping, daemon = Timing(), Timing(), Timing()
    own = segments.ReusableSegment()  # the same work as the client's segment, timed alone
    protocol.encode_message(header, tensors, own)  # fault its pages in, as the client's already are
    for i in range(repeats):
        start = time.perf_counter()
        protocol.encode_message(header, tensors, own)
        encode.samples.append(time.perf_counter() - start)
        start = time.perf_counter()
        # The client encodes into its own segment, then the daemon decodes the frame and answers ping.
        client._transport.request(lambda segment: protocol.encode_message(header, tensors, segment), "ping")
        ping.samples.append(time.perf_counter() - start - encode.samples[-1])
        daemon.samples.append(client.validate_op("ident", {"x": x}, out, dtype="float32", seed=100 + i).duration_ms
                              / 1e3)
    own.discard()
    rest = max(0.0, total - encode.median - ping.median - daemon.median)  # the legs are medians of separate runs
    ms = 1e3
    return Row(f"(e) breakdown, {label}", f"{total * ms:.1f} ms per request", "", None,
               note=f"client encode_message {encode.median * ms:.1f} ms; sending the same message as a ping "
                    f"(transport + daemon decode) {ping.median * ms:.1f} ms; daemon check (reference worker + compare, "
                    f"duration_ms) {daemon.median * ms:.1f} ms; rest (store, reply, client decode) about "
                    f"{rest * ms:.1f} ms")


def bench_load(daemon: Daemon, quick: bool) -> list[Row]:
    """(f) 32 client processes x 500 requests (every 10th a 1 MiB tensor, every 7th failing):
    no errors, every reply right, every run and every failure stored."""
    clients, per_client = (8, 100) if quick else (32, 500)
    log(f"load: {clients} client processes x {per_client} validate requests")
    with daemon.client() as client:
        runs_before = len(client.list_results(limit=0, op="load"))
        failures_before = len(client.list_failures(limit=0, op="load"))
    start = time.perf_counter()
    procs = [daemon.spawn_client("load", "--requests", str(per_client), "--client", str(i + 1))
             for i in range(clients)]
    summaries = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=3600)
        if p.returncode != 0:
            raise SystemExit(f"bench: a load client exited {p.returncode}: {stderr[-2000:]}")
        summaries.append(json.loads(stdout))
    seconds = time.perf_counter() - start
    with daemon.client() as client:
        runs = len(client.list_results(limit=0, op="load")) - runs_before
        failures = len(client.list_failures(limit=0, op="load")) - failures_before
    total = clients * per_client
    errors = sum(s["errors"] for s in summaries)
    wrong = sum(s["wrong"] for s in summaries)
    expected_failures = sum(s["expected_failures"] for s in summaries)
    ok = errors == 0 and wrong == 0 and runs == total and failures == expected_failures
    note = (f"{total} requests in {seconds:.1f} s; {errors} errors, {wrong} wrong replies; stored runs {runs} of "
            f"{total}, stored failures {failures} of {expected_failures}")
    firsts = [e for s in summaries for e in s["first_errors"] + s["first_wrong"]][:3]
    if firsts:
        note += f"; first problems: {firsts}"
    return [Row(f"(f) load: {clients} clients x {per_client} requests", f"{total / seconds:,.0f} requests/s", "",
                None, "no errors, nothing lost", ok, note=note)]


def bench_daemon(binary: Path, work: Path, quick: bool, parts: set[str]) -> list[Row]:
    daemon = Daemon(binary, work)
    log(f"daemon: starting one in {daemon.home}")
    daemon.start()
    rows: list[Row] = []
    try:
        if "d" in parts:
            log("daemon: ping latency alone and under load")
            rows += bench_ping(daemon, quick)
        if "e" in parts:
            log("daemon: validate_op throughput, 1 MiB and 64 MiB")
            rows += bench_validate(daemon, quick)
        if "f" in parts:
            rows += bench_load(daemon, quick)
    finally:
        daemon.stop()
        if os.path.exists(daemon.socket):
            log(f"daemon: warning: {daemon.socket} still exists after `gpuemu daemon stop`")
    return rows
