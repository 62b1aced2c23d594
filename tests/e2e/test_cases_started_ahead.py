"""End-to-end (issue 32): with one job thread the next case reaches the op's and the reference's
workers while gpuemu judges the current one (docs/worker-protocol.md, "Cases started ahead"). That
must change nothing but the time: the same result.json without timing, byte for byte, as one call at
a time (GPUEMU_PARALLEL_REFERENCE=0: nothing starts ahead) and as `--jobs 2` (cases only made ahead),
for a project with every verdict kind: passes, mismatches, an op that raises, one that writes into its
input, one whose worker dies, one that hangs past its timeout, and one whose answer depends on how
many calls its worker served (each worker must see the cases in the same order). Warm and cold ops.
The stored failures replay the same way. The bundled example project (examples/: eight ops, four of
them with the bugs gpuemu exists to catch) gives the same result.json either way too.
"""
from __future__ import annotations

import json
import shutil

from e2e_support import REPO

from test_ci_run import without_timing

OPS = '''
import os
import time

import numpy as np

CALLS = {"n": 0}

def ok(inputs):
    return inputs["x"] * 2

def tail_bug(inputs):
    out = inputs["x"] * 2
    if out.shape[-1] > 24:  # the last column of long rows
        out[..., -1] += 1.0
    return out

def raises_m3(inputs):
    if inputs["x"].shape[0] == 3:
        raise ValueError("M == 3 is not supported")
    return inputs["x"] * 2

def writes_input(inputs):
    x = inputs["x"]
    if x.shape[-1] % 2:
        x[..., 0] = 0
    return inputs["x"] * 2

def dies_m5(inputs):
    if inputs["x"].shape[0] == 5:
        os._exit(3)
    return inputs["x"] * 2

def hangs(inputs):
    if inputs["x"].shape[0] == 5 and inputs["x"].shape[1] > 28:
        time.sleep(60)
    return inputs["x"] * 2

def every_fourth_call_wrong(inputs):
    CALLS["n"] += 1
    out = inputs["x"] * 2
    if CALLS["n"] % 4 == 0:
        out = out + 1
    return out

def twice(inputs):
    return np.asarray(inputs["x"], dtype=np.float64) * 2
'''

COLD = '''
from gpuemu.script import serve
from ahead_ops import tail_bug
serve(tail_bug)
'''

WARM = ("ok", "tail_bug", "raises_m3", "writes_input", "dies_m5", "hangs", "every_fourth_call_wrong")
EXPECTED_KINDS = {
    "ok": set(), "tail_bug": {"mismatch"}, "raises_m3": {"op_error"}, "writes_input": {"input_mutated"},
    "dies_m5": {"op_error"}, "hangs": {"op_error"}, "every_fourth_call_wrong": {"mismatch"},
    "tail_bug_cold": {"mismatch"},
}


def write_project(project) -> None:
    (project.root / "ahead_ops.py").write_text(OPS)
    (project.root / "cold_tail_bug.py").write_text(COLD)
    tables = []
    for name in WARM + ("tail_bug_cold",):
        source = 'op_script = "cold_tail_bug.py"' if name == "tail_bug_cold" else f'module = "ahead_ops:{name}"'
        timeout = "timeout = 2\n" if name == "hangs" else ""
        tables.append(f'[[ops]]\nname = "{name}"\n{source}\nreference = "ahead_ops:twice"\n{timeout}'
                      '[ops.schema]\ndims = { M = [1, 6], N = [1, 40] }\ninputs = { x = ["M", "N"] }\n')
    (project.root / "gpuemu.toml").write_text(
        '[project]\nname = "started-ahead"\n\n[validation]\ndtypes = ["float32"]\nseed = 20261127\n'
        'test_cases = 2\n\n' + "\n".join(tables))


def ci_run(project, name: str, *args: str, env: dict | None = None) -> str:
    out = project.root / f"out-{name}"
    proc = project.run("ci", "run", "--iterations", "14", "--out", str(out), "--no-store", *args,
                       env=env, timeout=600)
    assert proc.returncode == 1, proc.stderr[-3000:]
    return json.dumps(without_timing(json.loads((out / "result.json").read_text())), sort_keys=True)


def test_cases_started_ahead_change_no_result(project):
    write_project(project)
    started_ahead = ci_run(project, "ahead")
    one_at_a_time = ci_run(project, "one", env={"GPUEMU_PARALLEL_REFERENCE": "0"})
    made_ahead = ci_run(project, "jobs2", "--jobs", "2")
    doc = json.loads(started_ahead)
    kinds = {op["op"]: {f["kind"] for f in op["failures"]} for op in doc["ops"]}
    assert kinds == EXPECTED_KINDS, kinds
    hangs = next(op for op in doc["ops"] if op["op"] == "hangs")
    assert all("timed out" in f["message"] for f in hangs["failures"]), hangs["failures"]
    # Every failing op also passed some cases: a case after a failure, a crash or a timeout ran.
    assert all(op["passed"] > 0 for op in doc["ops"]), [(op["op"], op["passed"]) for op in doc["ops"]]
    assert started_ahead == one_at_a_time
    # --jobs 2 runs the ops' cases on two threads, each with its own workers: the call counter of
    # every_fourth_call_wrong then depends on which thread took which case; every other op must match.
    def without_counter(text: str) -> list:
        return [op for op in json.loads(text)["ops"] if op["op"] != "every_fourth_call_wrong"]
    assert without_counter(made_ahead) == without_counter(started_ahead)


def test_a_failure_found_with_cases_started_ahead_replays(project):
    write_project(project)
    proc = project.run("--format", "json", "fuzz", "--iterations", "14", "--op", "writes_input", "--op", "dies_m5",
                       timeout=300)
    assert proc.returncode == 1, proc.stderr[-3000:]
    for op, kind in (("writes_input", "input_mutated"), ("dies_m5", "op_error")):
        stored = project.run("failures", "--op", op, "--format", "json", check_json=True).json["failures"]
        assert stored, op
        again = project.run("--format", "json", "reproduce", str(stored[0]["seed"]), "--op", op)
        assert again.returncode == 1 and kind in again.stdout, again.stdout[-2000:]


def test_the_bundled_example_gives_the_same_results_with_cases_started_ahead(project):
    shutil.copytree(REPO / "examples", project.root, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__", "out", ".gpuemu"))
    results = {}
    # One BLAS thread in both runs: gpuemu sizes the pools only when the op and the reference run at
    # once, and a float32 matmul summed by two threads can differ in the last bit from one summed by
    # one (the user's choice, which gpuemu keeps: docs/worker-protocol.md).
    pools = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    for name, env, args in (("ahead", pools, ()), ("one", {**pools, "GPUEMU_PARALLEL_REFERENCE": "0"}, ()),
                            ("jobs2", pools, ("--jobs", "2"))):
        out = project.root / f"out-{name}"
        proc = project.run("ci", "run", "--iterations", "30", "--out", str(out), "--no-store", *args, env=env,
                           timeout=900)
        assert proc.returncode == 1, proc.stderr[-3000:]
        results[name] = json.dumps(without_timing(json.loads((out / "result.json").read_text())), sort_keys=True)
    doc = json.loads(results["ahead"])
    failing = {op["op"] for op in doc["ops"] if op["failed"]}
    assert failing == {"attention_no_scale", "flash_attention_no_rescale", "matmul_acc_bug", "softmax_tail_bug"}, failing
    assert results["ahead"] == results["one"] == results["jobs2"]
