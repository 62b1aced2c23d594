"""End-to-end: `gpuemu calibrate --write` writes tolerances that hold. The fit covers every value
kind and layout the op is fuzzed with, so the same correct kernel then passes `fuzz` (boundary and
adversarial cases included) under other seeds; a re-check on fresh seeds that fails refuses to
write, says why, and leaves gpuemu.toml alone (issue 19)."""
import json

CUMSUM = """
[project]
name = "e2e-calibrate"

[validation]
dtypes = ["float32"]
seed = 7
timeout = 30

[[ops]]
name = "scan"
persistent = true
op_script = "op_cumsum_f32.py"
reference = "ref_cumsum.py"
layouts = ["contiguous", "strided"]

[ops.schema]
dims = { M = [1, 4], N = [1, 256] }
inputs = { x = ["M", "N"] }
"""


def test_written_tolerances_pass_the_same_correct_kernel_under_fuzzing(project):
    project.write(CUMSUM, ["op_cumsum_f32.py", "ref_cumsum.py"])
    proc = project.run("calibrate", "scan", "--iterations", "60", "--seed", "1", "--write", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    row = doc["dtypes"][0]
    assert doc["written"] and doc["checked"] and row["check"]["passed"] and row["check"]["cases"] == 60
    assert {(s["values"], s["layout"]) for s in row["strata"]} == {
        (v, l) for v in ("regular", "boundary", "adversarial") for l in ("contiguous", "strided")}
    assert "[ops.tolerances]" in (project.root / "gpuemu.toml").read_text()
    for seed in ("2", "3", "4"):
        fuzz = project.run("fuzz", "--iterations", "100", "--seed", seed, "--format", "json")
        result = json.loads(fuzz.stdout)["ops"][0]
        assert fuzz.returncode == 0, [f["message"] for f in result["failures"]][:3]


def test_text_output_reports_the_recheck(project):
    project.write(CUMSUM, ["op_cumsum_f32.py", "ref_cumsum.py"])
    proc = project.run("calibrate", "scan", "--iterations", "12", "--seed", "1")
    assert proc.returncode == 0, proc.stderr
    assert "re-check" in proc.stdout and "12/12 passed" in proc.stdout
    assert "atol from " in proc.stdout and "(use --write" in proc.stdout


def test_failed_recheck_refuses_to_write(project):
    toml = CUMSUM.replace('persistent = true\nop_script = "op_cumsum_f32.py"\nreference = "ref_cumsum.py"\n'
                          'layouts = ["contiguous", "strided"]',
                          'op_script = "op_drifting.py"\nreference = "ref_identity.py"')
    project.write(toml, ["op_drifting.py", "ref_identity.py"])
    before = (project.root / "gpuemu.toml").read_text()
    proc = project.run("calibrate", "scan", "--iterations", "6", "--write", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert not doc["written"] and not doc["checked"]
    check = doc["dtypes"][0]["check"]
    assert check["failed"] == check["cases"] == 6 and check["worst"]["kind"] == "mismatch"
    assert "not written" in proc.stderr and check["worst"]["seed"] in proc.stderr
    assert "--iterations" in proc.stderr
    assert (project.root / "gpuemu.toml").read_text() == before


def test_one_output_pairs_whatever_its_name_as_compare_does(project):
    """The op answers "out", the reference (the FAQ's form) "result": calibrate must measure that pair,
    as test and fuzz compare it, not fit float32 rounding on nothing (issue 41)."""
    toml = CUMSUM.replace('persistent = true\nop_script = "op_cumsum_f32.py"\nreference = "ref_cumsum.py"\n'
                          'layouts = ["contiguous", "strided"]',
                          'op_script = "op_off_by_1e3.py"\nreference = "ref_identity_as_result.py"')
    project.write(toml, ["op_off_by_1e3.py", "ref_identity_as_result.py"])
    proc = project.run("calibrate", "scan", "--iterations", "6", "--seed", "1", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    row = json.loads(proc.stdout)["dtypes"][0]
    assert row["errors"] == 0 and row["check"]["passed"], row
    assert 1e-3 <= row["fitted"]["atol"] < 1e-2, row["fitted"]


def test_failed_recheck_exits_1_without_write_too(project):
    toml = CUMSUM.replace('persistent = true\nop_script = "op_cumsum_f32.py"\nreference = "ref_cumsum.py"\n'
                          'layouts = ["contiguous", "strided"]',
                          'op_script = "op_drifting.py"\nreference = "ref_identity.py"')
    project.write(toml, ["op_drifting.py", "ref_identity.py"])
    proc = project.run("calibrate", "scan", "--iterations", "6")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAILED 6/6" in proc.stdout and "re-check FAILED: the fitted float32 tolerances" in proc.stderr
