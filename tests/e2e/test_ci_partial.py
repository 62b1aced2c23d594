"""`gpuemu ci run` under its time budget ([ci] thorough_timeout): a running case is cut within seconds
and reported, an op of which no case ran is NOT RUN in every report, and a partial run fails the gate
unless --allow-partial accepts it (docs/ci.md, "When the gate passes"). `gpuemu test` has the same
budget, in-process and through the daemon (docs/commands.md, "Time budget").
"""
import json
import pathlib
import shutil
import tempfile
import time
import xml.etree.ElementTree as ET

import jsonschema

from action_support import parse_outputs
from e2e_support import REPO

SCHEMAS = REPO / "tests" / "schemas"

# Two ops run warm (module:function, one worker per op and role): "fast", a correct identity, and
# "slow", whose every case sleeps far past the budget. The budget leaves "fast" time to run even on a
# loaded machine; only the budget can end "slow".
BUDGET = 10
TOML = f"""
[project]
name = "partial"

[validation]
dtypes = ["float32"]
seed = 7
timeout = 300
test_cases = 1
python_path = ["."]

[ci]
thorough_timeout = {BUDGET}
parallel_jobs = 1

[[ops]]
name = "fast"
op_script = "partial_ops:identity"
reference = "partial_ops:reference"
source = "partial_ops.py:5"

[ops.schema]
dims = {{ M = [1, 4], N = [1, 8] }}
inputs = {{ x = ["M", "N"] }}

[[ops]]
name = "slow"
op_script = "partial_ops:sleepy"
reference = "partial_ops:reference"
source = "partial_ops.py:9"

[ops.schema]
dims = {{ M = [1, 4], N = [1, 8] }}
inputs = {{ x = ["M", "N"] }}
"""

OPS = """import time

import numpy as np

def identity(inputs):
    return inputs["x"].copy()

def sleepy(inputs):
    time.sleep(600)
    return inputs["x"].copy()

def reference(inputs):
    return np.asarray(inputs["x"], dtype=np.float64)
"""


def load(path):
    return json.loads(pathlib.Path(path).read_text())


def partial_project(project):
    (project.root / "partial_ops.py").write_text(OPS)
    return project.write(TOML)


def run_timed(project, *args, **kwargs):
    started = time.monotonic()
    proc = project.run("ci", "run", "--iterations", "2", "--out", "out", *args, **kwargs)
    return proc, time.monotonic() - started


def test_a_running_case_is_cut_at_the_budget_and_the_partial_run_fails(project):
    partial_project(project)
    proc, elapsed = run_timed(project)
    # The slow case sleeps 600 s with a 300 s case timeout: only the budget can end it, within seconds.
    assert elapsed < BUDGET + 10, f"ci run took {elapsed:.1f} s with a {BUDGET} s budget"
    assert proc.returncode == 1, proc.stderr
    result = load(project.root / "out" / "result.json")
    jsonschema.validate(result, load(SCHEMAS / "result-v1.schema.json"))
    assert result["partial"] is True and result["passed"] is False
    assert result["ci"]["allow_partial"] is False
    ops = {op["op"]: op for op in result["ops"]}
    assert ops["fast"]["status"] == "passed" and ops["fast"]["total"] == 3
    assert ops["slow"]["status"] == "not_run" and ops["slow"]["total"] == 0
    assert ops["slow"]["failures"] == []  # a cut case is no failure
    assert [(c["op"], c["case"]) for c in result["cut"]] == [("slow", 0)]
    assert "thorough_timeout" in result["cut"][0]["message"]
    assert "CUT slow case 0" in proc.stderr and "NOT RUN slow" in proc.stderr

    text = (project.root / "out" / "summary.txt").read_text()
    assert "NOT RUN slow: 0 cases" in text and "PASS slow" not in text
    assert "CUT slow case 0" in text
    assert text.rstrip().splitlines()[-1].startswith("FAILED: 0 of 2 ops failed, 1 not run")

    junit = ET.parse(project.root / "out" / "junit.xml").getroot()
    slow = [tc for tc in junit.iter("testcase") if tc.get("classname") == "slow"]
    assert slow and all(tc.find("error") is not None and tc.find("error").get("type") == "not_run" for tc in slow)
    assert int(junit.get("errors")) >= 1

    sarif = load(project.root / "out" / "gpuemu.sarif")
    not_run = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "GPUEMU-NOT-RUN"]
    assert len(not_run) == 1 and not_run[0]["level"] == "error"
    assert not_run[0]["properties"]["op"] == "slow"
    jsonschema.validate(sarif, load(SCHEMAS / "sarif-2.1.0.json"))

    markdown = (project.root / "out" / "summary.md").read_text()
    assert markdown.startswith("## ❌") and "NOT RUN" in markdown and "✅ gpuemu" not in markdown

    # report render, from result.json alone, says the same.
    rendered = project.run("report", "render", "out/result.json", "--format", "text")
    assert "NOT RUN slow" in rendered.stdout


def test_allow_partial_passes_on_what_ran_and_still_says_not_run(project):
    partial_project(project)
    proc, elapsed = run_timed(project, "--allow-partial")
    assert elapsed < BUDGET + 10
    assert proc.returncode == 0, proc.stderr
    result = load(project.root / "out" / "result.json")
    assert result["partial"] is True and result["passed"] is True and result["ci"]["allow_partial"] is True
    assert {op["op"]: op["status"] for op in result["ops"]} == {"fast": "passed", "slow": "not_run"}
    junit = ET.parse(project.root / "out" / "junit.xml").getroot()
    slow = [tc for tc in junit.iter("testcase") if tc.get("classname") == "slow"]
    assert all(tc.find("skipped") is not None and "NOT RUN" in tc.find("skipped").get("message") for tc in slow)
    sarif = load(project.root / "out" / "gpuemu.sarif")
    assert [r["level"] for r in sarif["runs"][0]["results"] if r["ruleId"] == "GPUEMU-NOT-RUN"] == ["warning"]
    assert "NOT RUN slow" in (project.root / "out" / "summary.txt").read_text()


def test_a_partial_run_fails_under_fail_on_regressions_too(project):
    partial_project(project)
    proc, _ = run_timed(project, "--fail-on", "regressions")
    assert proc.returncode == 1, proc.stderr
    never, _ = run_timed(project, "--fail-on", "never")
    assert never.returncode == 0


def test_on_a_github_runner_an_op_not_run_is_annotated_and_counted(project, tmp_path):
    partial_project(project)
    output = tmp_path / "output.txt"
    env = {"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(project.root),
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "GITHUB_OUTPUT": str(output)}
    proc, _ = run_timed(project, env=env)
    assert proc.returncode == 1, proc.stderr
    errors = [line for line in proc.stdout.splitlines() if line.startswith("::error ")]
    assert any("title=gpuemu slow%3A op not run" in line and "file=partial_ops.py,line=9" in line for line in errors)
    outputs = parse_outputs(output.read_text())
    assert outputs["passed"] == "false" and outputs["not_run"] == "1" and outputs["failed"] == "0"


def test_merged_shards_keep_cut_cases_and_not_run_ops(project):
    partial_project(project)
    for i in (1, 2):
        proc = project.run("ci", "run", "--iterations", "2", "--shard", f"{i}/2", "--out", f"s{i}")
        assert proc.returncode == 1, proc.stderr
    merged = project.run("report", "merge", "s1", "s2", "--out", "merged")
    assert merged.returncode == 1, merged.stderr
    result = load(project.root / "merged" / "result.json")
    jsonschema.validate(result, load(SCHEMAS / "result-v1.schema.json"))
    assert {op["op"]: op["status"] for op in result["ops"]} == {"fast": "passed", "slow": "not_run"}
    assert [c["op"] for c in result["cut"]] == ["slow", "slow"]
    assert result["passed"] is False and result["partial"] is True


def test_gpuemu_test_stops_at_thorough_timeout_in_the_cli_and_the_daemon(project):
    # configuration.txt: thorough_timeout bounds "a thorough (non-quick) test run", not only ci run.
    # A 2 s budget: "slow" sleeps 600 s, so only the budget ends the run (CLI, then the daemon).
    partial_project(project)
    toml = project.root / "gpuemu.toml"
    toml.write_text(toml.read_text().replace(f"thorough_timeout = {BUDGET}", "thorough_timeout = 2"))
    started = time.monotonic()
    proc = project.run("test", "--op", "slow", "--cases", "1", "--format", "json")
    assert time.monotonic() - started < 30 and proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, load(SCHEMAS / "result-v1.schema.json"))
    assert doc["partial"] is True and doc["passed"] is False and doc["ops"][0]["total"] == 0
    message = "stopped at [ci] thorough_timeout (2 s) after 0 of 1 planned cases"
    assert any(w.startswith(message) and "raise thorough_timeout under [ci]" in w for w in doc["warnings"]), doc
    assert f"gpuemu test: warning: {message}" in proc.stderr

    home = pathlib.Path(tempfile.mkdtemp(prefix="gtt", dir="/tmp")) / "h"  # socket paths are short
    env = {"GPUEMU_HOME": str(home)}
    try:
        assert project.run("daemon", "start", "--background", env=env, timeout=120).returncode == 0
        via_daemon = project.run("--daemon", "test", "--op", "slow", "--cases", "1", "--format", "json", env=env)
        assert via_daemon.returncode == 1, via_daemon.stderr
        daemon_doc = json.loads(via_daemon.stdout)
        assert daemon_doc["partial"] is True and daemon_doc["passed"] is False
        assert any(w.startswith(message) for w in daemon_doc["warnings"]), daemon_doc
        # The other direction: within its budget a test run passes, through the daemon as in-process.
        toml.write_text(toml.read_text().replace("thorough_timeout = 2", "thorough_timeout = 60"))
        fast = project.run("--daemon", "test", "--op", "fast", "--cases", "1", "--format", "json", env=env)
        assert fast.returncode == 0 and json.loads(fast.stdout)["partial"] is False, fast.stderr
    finally:
        project.run("daemon", "stop", env=env, timeout=120)
        shutil.rmtree(home.parent, ignore_errors=True)
