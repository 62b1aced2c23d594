"""End-to-end: misbehaving op and reference scripts through the real binary.

Each misbehaviour must become an op_error/reference_error (or a shape/dtype failure) with the
script's stderr, exit code 1, and never a crash, a hang, or a numerical pass.
"""
import json
import os
import time

from e2e_support import one_op_toml


def fuzz_json(project, *extra, env=None):
    proc = project.run("fuzz", "--iterations", "3", "--format", "json", *extra, env=env)
    assert proc.stdout.strip(), proc.stderr
    return proc, json.loads(proc.stdout)


def only_op(doc):
    assert len(doc["ops"]) == 1
    return doc["ops"][0]


def test_correct_op_passes_and_exits_zero(project):
    project.write(one_op_toml("op_identity.py"), ["op_identity.py", "ref_identity.py"])
    proc, doc = fuzz_json(project)
    assert proc.returncode == 0, proc.stderr
    op = only_op(doc)
    assert doc["passed"] is True and op["total"] == 3 and op["passed"] == 3 and op["failures"] == []
    assert doc["seed"] == "7"


def test_crashing_op_is_op_error_with_stderr(project):
    project.write(one_op_toml("op_crash.py"), ["op_crash.py", "ref_identity.py"])
    proc, doc = fuzz_json(project)
    assert proc.returncode == 1
    op = only_op(doc)
    assert op["errors"] == 3 and op["passed"] == 0
    failure = op["failures"][0]
    assert failure["kind"] == "op_error"
    assert "exploded on purpose" in failure["stderr"]
    assert "op_crash.py" in failure["message"]


def test_crashing_reference_is_reference_error(project):
    project.write(one_op_toml("op_identity.py", reference="op_crash.py"), ["op_identity.py", "op_crash.py"])
    proc, doc = fuzz_json(project)
    assert proc.returncode == 1
    assert {f["kind"] for f in only_op(doc)["failures"]} == {"reference_error"}


def test_hanging_op_is_killed_with_its_process_group(project):
    pid_file = project.root / "hang.pids"
    project.write(one_op_toml("op_hang.py", extra="timeout = 1.0"), ["op_hang.py", "ref_identity.py"])
    started = time.monotonic()
    proc = project.run("fuzz", "--iterations", "2", "--format", "json", env={"HANG_PID_FILE": str(pid_file)},
                       timeout=60)
    elapsed = time.monotonic() - started
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    failures = only_op(doc)["failures"]
    assert [f["kind"] for f in failures] == ["op_error", "op_error"]
    assert "timed out" in failures[0]["message"]
    assert elapsed < 30
    time.sleep(0.5)
    for line in pid_file.read_text().split("\n"):
        for pid in line.split():
            assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z", \
                f"process {pid} of the hung script survived"


def test_garbage_stdout_is_op_error(project):
    project.write(one_op_toml("op_garbage.py"), ["op_garbage.py", "ref_identity.py"])
    proc, doc = fuzz_json(project)
    assert proc.returncode == 1
    failure = only_op(doc)["failures"][0]
    assert failure["kind"] == "op_error"
    assert "Loading kernel" in failure["message"]


def test_megabytes_of_stderr_are_bounded_and_case_passes(project):
    project.write(one_op_toml("op_stderr_flood.py"), ["op_stderr_flood.py", "ref_identity.py"])
    proc, doc = fuzz_json(project)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert only_op(doc)["passed"] == 3
    assert len(proc.stdout) < 100_000


def test_wrong_shape_is_shape_mismatch(project):
    project.write(one_op_toml("op_wrong_shape.py"), ["op_wrong_shape.py", "ref_identity.py"])
    proc, doc = fuzz_json(project)
    assert proc.returncode == 1
    kinds = {f["kind"] for f in only_op(doc)["failures"]}
    assert kinds == {"shape_mismatch"}


def test_wrong_dtype_is_dtype_mismatch(project):
    project.write(one_op_toml("op_wrong_dtype.py"), ["op_wrong_dtype.py", "ref_identity.py"])
    proc, doc = fuzz_json(project)
    assert proc.returncode == 1
    assert {f["kind"] for f in only_op(doc)["failures"]} == {"dtype_mismatch"}


def test_script_that_never_reads_stdin_does_not_deadlock(project):
    # 64 x 70000 float32 = ~17 MiB of base64 on stdin, far beyond a pipe buffer.
    toml = one_op_toml("op_no_stdin.py").replace('dims = { M = [1, 8], N = [1, 70] }',
                                                 'dims = { M = [64, 64], N = [70000, 70000] }')
    project.write(toml, ["op_no_stdin.py", "ref_identity.py"])
    proc = project.run("fuzz", "--iterations", "1", "--format", "json", timeout=120)
    assert proc.returncode == 1
    assert only_op(json.loads(proc.stdout))["failures"][0]["kind"] == "op_error"


def test_nan_everywhere_never_passes(project):
    project.write(one_op_toml("op_nan.py"), ["op_nan.py", "ref_identity.py"])
    proc, doc = fuzz_json(project)
    assert proc.returncode == 1
    assert {f["kind"] for f in only_op(doc)["failures"]} == {"unexpected_nonfinite"}


def test_tail_bug_is_caught_and_replays(project):
    project.write(one_op_toml("op_off_by_tail.py"), ["op_off_by_tail.py", "ref_identity.py"])
    proc = project.run("fuzz", "--iterations", "30", "--format", "json")
    assert proc.returncode == 1
    failure = only_op(json.loads(proc.stdout))["failures"][0]
    assert failure["kind"] == "mismatch"
    assert failure["shapes"]["x"][1] % 16 != 0
    seed = failure["seed"]
    assert failure["replay"] == f"gpuemu reproduce {seed} --op op"

    again = project.run("reproduce", seed, "--op", "op", "--format", "json")
    assert again.returncode == 1
    replay = json.loads(again.stdout)
    for key in ("kind", "shapes", "max_abs", "max_rel", "dtype", "worst"):
        assert replay[key] == failure[key], key

    text = project.run("reproduce", seed, "--op", "op")
    assert text.returncode == 1
    assert "worst elements" in text.stdout and "FAIL" in text.stdout


def test_text_output_has_replay_line_per_failure(project):
    project.write(one_op_toml("op_off_by_tail.py"), ["op_off_by_tail.py", "ref_identity.py"])
    proc = project.run("fuzz", "--iterations", "20")
    assert proc.returncode == 1
    replay_lines = [l for l in proc.stdout.splitlines() if l.strip().startswith("replay: gpuemu reproduce ")]
    assert replay_lines
    # Progress and logs go to stderr only.
    assert "master seed 7" in proc.stderr


def test_strided_layout_is_real_memory(project):
    toml = one_op_toml("op_strided_naive.py", extra='layouts = ["strided"]')
    project.write(toml, ["op_strided_naive.py", "ref_identity.py"])
    proc, doc = fuzz_json(project)
    assert proc.returncode == 1
    assert all(f["layout"] == "strided" for f in only_op(doc)["failures"])
    identity = one_op_toml("op_identity.py", extra='layouts = ["strided", "transposed"]')
    project.write(identity, ["op_identity.py"])
    proc, doc = fuzz_json(project)
    assert proc.returncode == 0, doc
