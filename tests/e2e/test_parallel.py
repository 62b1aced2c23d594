"""End-to-end: parallel and warm runs give the serial, cold result (issue 4). `fuzz --jobs 2` writes
the same result document as `--jobs 1` with the same seed (durations aside), and warm workers
(`persistent = true`) give the same verdicts, seeds, statistics and order as a process per case.

The project has three ops over x[M, N] so every verdict appears: a correct identity, one with a
tail bug (a mismatch whenever N is not a multiple of 16) and one that raises when M == 3 (op_error).
"""
import json

REF = '''from gpuemu.script import serve


def ref(inputs, **kwargs):
    return inputs["x"].astype("float64")


serve(ref, role="reference")
'''

OPS = {
    "identity": "out = x.copy()",
    "tail_bug": "out = x.copy()\n    if out.shape[-1] % 16:\n        out[..., -1] += 1.0",
    "raises_on_m3": ("if x.shape[0] == 3:\n        raise ValueError('M == 3 is not supported')\n"
                     "    out = x.copy()"),
}


def op_script(body: str) -> str:
    return f'''from gpuemu.script import serve


def op(inputs, **kwargs):
    x = inputs["x"]
    {body}
    return out


serve(op)
'''


def write_project(project, persistent: bool):
    (project.root / "ref.py").write_text(REF)
    toml = ['[project]\nname = "parallel"\n\n[validation]\ndtypes = ["float32", "float16"]\nseed = 7\ntimeout = 20\n']
    for name, body in OPS.items():
        (project.root / f"{name}.py").write_text(op_script(body))
        toml.append(f"""
[[ops]]
name = "{name}"
persistent = {str(persistent).lower()}
op_script = "{name}.py"
reference = "ref.py"

[ops.schema]
dims = {{ M = [1, 4], N = [1, 40] }}
inputs = {{ x = ["M", "N"] }}
output = ["M", "N"]
""")
    (project.root / "gpuemu.toml").write_text("".join(toml))
    return project


def fuzz(project, iterations: int, jobs: int, ops=tuple(OPS)) -> dict:
    op_flags = [arg for name in ops for arg in ("--op", name)]
    proc = project.run("fuzz", "--iterations", str(iterations), "--seed", "20261123", "--jobs", str(jobs),
                       "--format", "json", *op_flags, timeout=120)
    assert proc.returncode == 1, f"exit {proc.returncode} (a failing op must give 1)\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout)


def kinds(doc: dict) -> dict[str, set[str]]:
    return {op["op"]: {f["kind"] for f in op["failures"]} for op in doc["ops"]}


def assert_every_verdict_appears(doc: dict):
    # Without passes, failures and errors the comparisons below would prove nothing.
    expected = {"identity": set(), "raises_on_m3": {"op_error"}, "tail_bug": {"mismatch"}}
    assert kinds(doc) == {op["op"]: expected[op["op"]] for op in doc["ops"]}, kinds(doc)
    ops = {op["op"]: op for op in doc["ops"]}
    assert ops["tail_bug"]["passed"] > 0 and ops["raises_on_m3"]["passed"] > 0


def test_jobs_2_writes_the_serial_result_document(project):
    write_project(project, persistent=True)
    serial = fuzz(project, 40, jobs=1)
    parallel = fuzz(project, 40, jobs=2)
    assert_every_verdict_appears(serial)
    assert serial.pop("duration_secs") >= 0 and parallel.pop("duration_secs") >= 0
    # Wall-clock timing differs between any two runs; everything else must not.
    for doc in (serial, parallel):
        doc.pop("timing")
        for op in doc["ops"]:
            op.pop("timing")
    assert parallel == serial


# What must not depend on how the scripts run. Messages and stderr of op_error differ on purpose
# (a cold script's exit status and stderr against the warm worker's exception), so only the kind
# is compared for errors; numerical failures must match to the last field.
CASE_FIELDS = ("seed", "case", "op", "kind", "dtype", "layout", "distribution", "shapes", "dims", "max_abs",
               "max_rel", "max_ulp", "tolerance_used", "atol", "rtol", "mismatches", "elements", "worst")


def comparable(doc: dict) -> list:
    ops = []
    for op in doc["ops"]:
        failures = []
        for f in op["failures"]:
            kept = {k: f.get(k) for k in CASE_FIELDS}
            if f["kind"] == "mismatch":
                kept["message"] = f["message"]
            failures.append(kept)
        ops.append({"op": op["op"], "total": op["total"], "passed": op["passed"], "failed": op["failed"],
                    "errors": op["errors"], "dtypes": op["dtypes"], "failures": failures})
    return ops


def test_warm_workers_give_the_cold_verdicts_seeds_and_order(project):
    # Two projects side by side, built like the fixture's (type(project): conftest is not importable
    # by name when several suites run in one session).
    cold_project, warm_project = (type(project)(project.root / sub, project.binary) for sub in ("cold", "warm"))
    for p, persistent in ((cold_project, False), (warm_project, True)):
        p.root.mkdir()
        write_project(p, persistent)
    # Few cases, two jobs: cold mode starts two interpreters per case (jobs are checked above), and
    # the two buggy ops pass some cases too.
    ops = ("raises_on_m3", "tail_bug")
    cold = fuzz(cold_project, 8, jobs=2, ops=ops)
    warm = fuzz(warm_project, 8, jobs=2, ops=ops)
    assert_every_verdict_appears(cold)
    assert comparable(warm) == comparable(cold)
    assert warm["seed"] == cold["seed"] and warm["passed"] is cold["passed"] is False
