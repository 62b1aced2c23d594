#!/usr/bin/env python3
# Writes the seed corpus of harness_requests (tests/harness/harness_requests.cpp): requests of every type against
# the harness's project, and the request vectors of tests/vectors/protocol, as header NUL payload.
import json
import struct
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def seed(out: Path, name: str, header: dict, payload: bytes = b"") -> None:
    text = json.dumps({"protocol_version": 1, **header}, separators=(",", ":")).encode()
    (out / f"seed-{name}").write_bytes(text + (b"\0" + payload if payload else b""))


def tensor(name: str, offset: int, shape: list, dtype: str = "float32", size: int = 4, strides=None) -> dict:
    count = 1
    for d in shape:
        count *= d
    entry = {"name": name, "dtype": dtype, "shape": shape, "offset": offset, "nbytes": count * size}
    if strides is not None:
        entry["strides"] = strides
    return entry


def main() -> int:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    vectors = json.loads((REPO / "tests/vectors/protocol/messages.json").read_text())
    for group in ("good", "bad_requests"):
        for i, v in enumerate(vectors[group]):
            raw = bytes.fromhex(v["hex"])
            if len(raw) < 20 or raw[:4] != b"GEMU":
                continue
            header_bytes, payload_bytes = struct.unpack_from("<IQ", raw, 8)
            body = raw[20:]
            if header_bytes + payload_bytes != len(body):
                continue
            payload = body[header_bytes:]
            (out / f"seed-vector-{group}-{i}").write_bytes(body[:header_bytes] + (b"\0" + payload if payload else b""))

    six = struct.pack("<6f", 1, 2, 3, 4, 5, 6)
    x23 = tensor("input/x", 0, [2, 3], strides=[3, 1])
    out23 = tensor("output/out", 24, [2, 3], strides=[3, 1])
    seed(out, "ping", {"type": "ping", "id": 1})
    seed(out, "shutdown", {"type": "shutdown"})
    seed(out, "validate", {"type": "validate", "op": "ident", "seed": "7", "tensors": [x23, out23]}, six + six)
    seed(out, "validate-fail", {"type": "validate", "op": "client", "dtype": "float32", "kwargs": {"k": 1},
                                "tensors": [tensor("input/x", 0, [6]), tensor("output/out", 0, [6])]}, six)
    seed(out, "validate-f16", {"type": "validate", "op": "ident", "layout": "transposed", "dims": {"M": 2, "N": 2},
                               "tensors": [tensor("input/x", 0, [2, 2], "float16", 2, [1, 2]),
                                           tensor("output/out", 8, [2, 2], "float16", 2)]}, bytes(16))
    seed(out, "validate-zero-strides", {"type": "validate", "op": "ident", "tensors": [
        tensor("input/x", 0, [100000000, 1], strides=[0, 1]) | {"nbytes": 4},
        tensor("output/out", 0, [4])]}, six[:16])
    seed(out, "validate-limit", {"type": "validate", "op": "ident", "max_case_elements": 4,
                                 "tensors": [x23, out23]}, six + six)
    seed(out, "submit", {"type": "submit_output", "op": "swapped", "seed": "3", "tensors": [
        tensor("input/x", 0, [3]), tensor("input/y", 12, [3]), tensor("output/out", 0, [3])]}, six)
    seed(out, "submit-client-failure", {"type": "submit_output", "op": "ident", "seed": "1",
                                        "client_failure": {"kind": "op_error", "message": "m"}, "tensors": [x23]}, six)
    seed(out, "submit-minimized", {"type": "submit_output", "op": "client", "seed": "9", "minimized_from": "3",
                                   "tensors": [tensor("input/x", 0, [2]), tensor("output/out", 8, [2])]}, six[:16])
    seed(out, "case", {"type": "get_test_case", "op": "ident", "seed": "3"})
    seed(out, "case-schema", {"type": "get_test_case", "op": "ident", "op_schema": {
        "dims": [{"name": "M", "candidates": [1, 4]}, {"name": "K", "min": 1, "max": 8}],
        "inputs": [{"name": "x", "dims": ["M", "K"]}], "output": {"name": "out", "dims": ["M", "K"]}}})
    seed(out, "case-huge-schema", {"type": "get_test_case", "op": "ident", "op_schema": {
        "dims": [{"name": "M", "min": 1, "max": 16777216}], "inputs": [{"name": "x", "dims": ["M", "M"]}]}})
    seed(out, "batch", {"type": "get_test_batch", "op": "swapped", "seed": "3", "start": 2, "count": 3,
                        "dtypes": ["float16", "bfloat16"], "values": "boundary"})
    seed(out, "batch-over", {"type": "get_test_batch", "op": "ident", "count": 64, "max_case_bytes": 100})
    seed(out, "fuzz", {"type": "fuzz", "op": "ident", "seed": "5", "iterations": 3})
    seed(out, "fuzz-failing", {"type": "fuzz", "op": "swapped", "seed": "6", "iterations": 2, "fail_fast": True})
    seed(out, "fuzz-client-op", {"type": "fuzz", "op": "ident", "op_script": "swap.sh", "dtypes": ["float16"],
                                 "layouts": ["strided"], "iterations": 2})
    seed(out, "fuzz-all", {"type": "fuzz", "ops": ["ident", "swapped"], "dtype": "float32", "layout": "contiguous",
                           "values": "adversarial", "iterations": 1, "jobs": 1})
    seed(out, "fuzz-missing-script", {"type": "fuzz", "op": "ident", "op_script": "nope.sh"})
    for name in ("broken.toml", "pipe.toml", "zero.toml", "missing.toml"):
        seed(out, f"fuzz-config-{name}", {"type": "fuzz", "op": "ident", "config": name})
    seed(out, "test", {"type": "test", "ops": ["ident"], "seed": "4", "cases": 1, "dtype": "float32"})
    seed(out, "reproduce", {"type": "reproduce", "seed": "5", "op": "swapped"})
    seed(out, "reproduce-client", {"type": "reproduce", "seed": "9", "op": "client"})
    seed(out, "reproduce-client-runs", {"type": "reproduce", "seed": "3", "op": "ident", "client_runs_op": True})
    seed(out, "minimize", {"type": "minimize", "seed": "5", "op": "swapped", "strategy": "dims", "max_iters": 3})
    seed(out, "minimize-client", {"type": "minimize", "seed": "9", "op": "client"})
    seed(out, "get-result", {"type": "get_result", "seed": "7", "op": "ident"})
    seed(out, "list-results", {"type": "list_results", "limit": 5, "op": "ident"})
    seed(out, "list-failures", {"type": "list_failures", "op": "swapped", "limit": 0})
    seed(out, "store-baseline", {"type": "store_baseline", "tag": "main"})
    seed(out, "store-baseline-run", {"type": "store_baseline", "tag": "t", "run_id": 1})
    seed(out, "calibrate", {"type": "calibrate", "op": "ident", "dtype": "float32", "iterations": 2, "seed": "2"})
    seed(out, "calibrate-against", {"type": "calibrate", "op": "swapped", "against": "ref.sh"})
    ptx = (REPO / "tests/kernels/saxpy.ptx").read_text()
    seed(out, "lint", {"type": "lint", "ptx": ptx})
    # The harness project's [[kernels]] entry "copy" (its artifact_checks apply to this entry).
    copy = (".version 7.0\n.target sm_80\n.address_size 64\n"
            ".visible .entry copy(.param .u64 copy_param_0, .param .u64 copy_param_1)\n{\n"
            "\t.reg .f32 \t%f<2>;\n\t.reg .b64 \t%rd<3>;\n\tld.param.u64 \t%rd1, [copy_param_0];\n"
            "\tld.param.u64 \t%rd2, [copy_param_1];\n\tld.global.f32 \t%f1, [%rd1];\n"
            "\tst.global.f32 \t[%rd2], %f1;\n\tret;\n}\n")
    seed(out, "lint-kernel", {"type": "lint", "ptx": copy, "kernel": "copy", "arch": "sm_90"})
    seed(out, "lint-garbage", {"type": "lint", "ptx": ".version 7.0\n.entry x(\n"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
