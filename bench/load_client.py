# One client process of the daemon benchmarks: either validates small tensors until told to stop
# (the load behind "ping under load"), or sends a fixed mix of requests and checks every reply.
"""python3 load_client.py SOCKET CONFIG OP (--until-file PATH | --requests N --client I)

Prints one JSON object on stdout: requests sent, errors (exceptions) with the first messages, and
for --requests the replies that did not say what was expected (seed, verdict, kind)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from gpuemu import Client

SMALL = (4, 33)
LARGE = (512, 512)  # 1 MiB of float32


def case(client_index: int, j: int) -> tuple[int, tuple[int, int], bool]:
    """(seed, shape, expect_pass) of request j of client i: every 10th is large, every 7th fails."""
    seed = client_index * 1_000_000 + j + 1
    return seed, LARGE if j % 10 == 0 else SMALL, j % 7 != 3


def until_file(client: Client, op: str, path: str) -> dict:
    rng = np.random.default_rng(os.getpid())
    sent, errors = 0, []
    ready_marked = False
    while not os.path.exists(path):
        x = rng.standard_normal(SMALL, dtype=np.float32)
        try:
            client.validate_op(op, {"x": x}, x.copy(), dtype="float32", seed=sent + 1)
        except Exception as exc:  # noqa: BLE001 - counted and reported, the load goes on
            errors.append(f"{type(exc).__name__}: {exc}")
        sent += 1
        if not ready_marked:
            print("ready", file=sys.stderr, flush=True)
            ready_marked = True
    return {"requests": sent, "errors": len(errors), "first_errors": errors[:3]}


def fixed_mix(client: Client, op: str, client_index: int, requests: int) -> dict:
    rng = np.random.default_rng(client_index)
    errors, wrong = [], []
    expected_failures = 0
    started = time.perf_counter()
    for j in range(requests):
        seed, shape, expect_pass = case(client_index, j)
        x = rng.standard_normal(shape, dtype=np.float32)
        out = x.copy() if expect_pass else x + np.float32(1.0)
        try:
            result = client.validate_op(op, {"x": x}, out, dtype="float32", seed=seed)
        except Exception as exc:  # noqa: BLE001
            errors.append(f"request {j} (seed {seed}): {type(exc).__name__}: {exc}")
            continue
        expected_failures += not expect_pass
        if result.seed != seed or result.passed != expect_pass or (not expect_pass and result.kind != "mismatch"):
            wrong.append(f"request {j}: seed {result.seed} (sent {seed}), passed {result.passed} (expected "
                         f"{expect_pass}), kind {result.kind}")
    return {"requests": requests, "errors": len(errors), "first_errors": errors[:3], "wrong": len(wrong),
            "first_wrong": wrong[:3], "expected_failures": expected_failures,
            "seconds": time.perf_counter() - started}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("socket")
    parser.add_argument("config")
    parser.add_argument("op")
    parser.add_argument("--until-file")
    parser.add_argument("--requests", type=int)
    parser.add_argument("--client", type=int, default=0)
    args = parser.parse_args()
    with Client(socket_path=args.socket, timeout_ms=300_000, config=args.config, inline=False) as client:
        if args.until_file:
            summary = until_file(client, args.op, args.until_file)
        else:
            summary = fixed_mix(client, args.op, args.client, args.requests)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
