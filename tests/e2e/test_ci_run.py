"""`gpuemu ci run` end to end: the files it writes (validated against the vendored schemas), exit
codes, quick mode, the time budget, baselines, signing, sharding + merge, and a GitHub runner's view.
"""
import json
import pathlib
import re
import shutil
import subprocess

import jsonschema
import pytest

from action_support import parse_outputs
from e2e_support import REPO, one_op_toml

SCHEMAS = REPO / "tests" / "schemas"
REPORT_FILES = ("result.json", "junit.xml", "gpuemu.sarif", "summary.md", "summary.txt")
FAST = 'test_cases = 2'


def buggy(project, extra_toml=""):
    toml = one_op_toml("op_off_by_tail.py", extra='source = "op_off_by_tail.py:7"', validation=FAST) + extra_toml
    return project.write(toml, ["op_off_by_tail.py", "ref_identity.py"])


def correct(project, extra_toml=""):
    toml = one_op_toml("op_identity.py", extra='source = "op_identity.py"', validation=FAST) + extra_toml
    return project.write(toml, ["op_identity.py", "ref_identity.py"])


def load(path):
    return json.loads(pathlib.Path(path).read_text())


def without_timing(value):
    """The document minus wall-clock fields, which differ between any two runs."""
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items()
                if "duration" not in k and k not in ("elapsed_ms", "timing")}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


def xmllint_valid(xml: pathlib.Path, xsd: pathlib.Path):
    proc = subprocess.run(["xmllint", "--noout", "--schema", str(xsd), str(xml)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_failing_project_writes_every_report_and_exits_1(project):
    buggy(project)
    proc = project.run("ci", "run", "--iterations", "8", "--seed", "11", "--out", "out")
    assert proc.returncode == 1, proc.stderr
    out = project.root / "out"
    for name in REPORT_FILES:
        assert (out / name).is_file(), name
    result = load(out / "result.json")
    jsonschema.validate(result, load(SCHEMAS / "result-v1.schema.json"))
    assert result["command"] == "ci" and result["passed"] is False and result["partial"] is False
    assert result["ci"] == {"quick": False, "allow_partial": False, "shard": None, "baseline": None, "lint": None}
    assert result["cut"] == [] and result["ops"][0]["status"] == "failed"
    op = result["ops"][0]
    assert op["total"] == 2 + 8 and op["failed"] > 0
    xmllint_valid(out / "junit.xml", SCHEMAS / "junit.xsd")
    junit = (out / "junit.xml").read_text()
    assert 'file="op_off_by_tail.py"' in junit and 'line="7"' in junit
    assert "gpuemu reproduce" in junit
    sarif = load(out / "gpuemu.sarif")
    jsonschema.validate(sarif, load(SCHEMAS / "sarif-2.1.0.json"))
    results = sarif["runs"][0]["results"]
    assert len(results) == 1 and "gpuemu reproduce" in results[0]["message"]["text"]
    location = results[0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "op_off_by_tail.py" and location["region"]["startLine"] == 7
    summary = (out / "summary.md").read_text()
    assert len(summary.encode()) < 1024 * 1024 and "gpuemu reproduce" in summary
    # stdout is the text summary; the run is stored like any fuzz run.
    assert proc.stdout == (out / "summary.txt").read_text()
    failures = project.run("failures", "--format", "json", check_json=True).json["failures"]
    assert failures and all(f["op"] == "op" for f in failures)


def test_every_file_renders_again_offline_byte_for_byte(project):
    buggy(project)
    project.run("ci", "run", "--iterations", "6", "--seed", "3", "--out", "out")
    formats = {"junit": "junit.xml", "sarif": "gpuemu.sarif", "markdown": "summary.md", "text": "summary.txt",
               "json": "result.json"}
    for fmt, name in formats.items():
        proc = project.run("report", "render", "out/result.json", "--format", fmt)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == (project.root / "out" / name).read_text(), fmt


def test_passing_project_exits_0_with_clean_reports(project):
    correct(project)
    proc = project.run("ci", "run", "--iterations", "4", "--out", "out")
    assert proc.returncode == 0, proc.stderr
    out = project.root / "out"
    assert load(out / "result.json")["passed"] is True
    assert load(out / "gpuemu.sarif")["runs"][0]["results"] == []
    xmllint_valid(out / "junit.xml", SCHEMAS / "junit.xsd")
    assert "<failure" not in (out / "junit.xml").read_text()


def test_strict_junit_flavor_validates_against_jenkins_schema(project):
    buggy(project)
    proc = project.run("ci", "run", "--iterations", "4", "--junit-flavor", "strict", "--out", "out")
    assert proc.returncode == 1
    junit = project.root / "out" / "junit.xml"
    xmllint_valid(junit, SCHEMAS / "junit-jenkins.xsd")
    assert 'file="' not in junit.read_text()


def test_quick_runs_only_quick_dtypes_and_quick_iterations(project):
    toml = one_op_toml("op_identity.py", validation=FAST).replace('dtypes = ["float32"]',
                                                                   'dtypes = ["float32", "float64"]')
    project.write(toml + '\n[ci]\nquick_dtypes = ["float64"]\nquick_iterations = 3\n',
                  ["op_identity.py", "ref_identity.py"])
    proc = project.run("ci", "run", "--quick", "--out", "out")
    assert proc.returncode == 0, proc.stderr
    result = load(project.root / "out" / "result.json")
    assert result["ci"]["quick"] is True
    op = result["ops"][0]
    assert [d["dtype"] for d in op["dtypes"] if d["total"]] == ["float64"] and op["total"] == 2 + 3


def test_time_budget_keeps_partial_results(project):
    (project.root / "op_slow.py").write_text(
        "import time, _proto\nx, _, _ = _proto.read()\ntime.sleep(0.4)\n_proto.write(x['x'].copy())\n")
    toml = one_op_toml("op_slow.py", validation=FAST)
    project.write(toml + "\n[ci]\nthorough_timeout = 3\n", ["ref_identity.py"])
    proc = project.run("ci", "run", "--iterations", "50", "--out", "out")
    result = load(project.root / "out" / "result.json")
    assert result["partial"] is True
    # What finished is kept; the case running at the budget is cut (on a loaded machine it may be
    # the first one), and a partial run does not pass (docs/ci.md).
    assert result["ops"][0]["total"] < 52 and (result["ops"][0]["total"] > 0 or result["cut"])
    assert proc.returncode == 1 and result["passed"] is False
    assert "partial" in proc.stderr
    jsonschema.validate(result, load(SCHEMAS / "result-v1.schema.json"))


def test_bad_options_are_usage_errors_before_any_case_runs(project):
    # Each bad option's message is a CLI case (tests/cli/cases/ci_run_*.case); here, that nothing is written.
    correct(project)
    proc = project.run("ci", "run", "--shard", "3/2", "--out", "out")
    assert proc.returncode == 2, proc.stderr
    assert not (project.root / "out" / "result.json").exists()


def test_shards_merge_into_the_unsharded_run(project):
    buggy(project)
    whole = project.run("ci", "run", "--iterations", "9", "--seed", "5", "--out", "whole")
    assert whole.returncode == 1
    for i in (1, 2, 3):
        proc = project.run("ci", "run", "--iterations", "9", "--seed", "5", "--shard", f"{i}/3", "--out", f"s{i}")
        assert proc.returncode in (0, 1), proc.stderr
        assert load(project.root / f"s{i}" / "result.json")["ci"]["shard"] == f"{i}/3"
    merged = project.run("report", "merge", "s3", "s1", "s2", "--out", "merged")
    assert merged.returncode == 1, merged.stderr
    expected = without_timing(load(project.root / "whole" / "result.json"))
    assert without_timing(load(project.root / "merged" / "result.json")) == expected
    for name in ("gpuemu.sarif",):
        assert (project.root / "merged" / name).read_text() == (project.root / "whole" / name).read_text()


def test_regression_against_a_stored_baseline(project):
    correct(project)
    assert project.run("ci", "run", "--iterations", "6", "--seed", "9", "--out", "before").returncode == 0
    assert project.run("baseline", "store", "main").returncode == 0
    assert project.run("baseline", "export", "main", "main.json").returncode == 0
    buggy(project)
    proc = project.run("ci", "run", "--iterations", "6", "--seed", "9", "--baseline", "main", "--out", "after")
    assert proc.returncode == 1
    result = load(project.root / "after" / "result.json")
    regressions = result["ci"]["baseline"]["regressions"]
    assert [(r["op"], r["dtype"]) for r in regressions] == [("op", "float32")]
    assert "REGRESSION" in proc.stderr
    assert "regression" in (project.root / "after" / "summary.md").read_text().lower()
    # The exported file and a file:// URL give the same comparison.
    from_file = project.run("ci", "run", "--iterations", "6", "--seed", "9", "--baseline", "main.json",
                            "--out", "file")
    assert from_file.returncode == 1
    assert load(project.root / "file" / "result.json")["ci"]["baseline"]["regressions"] == regressions
    store = project.root / "remote"
    assert project.run("baseline", "push", "main", f"file://{store}", "--force").returncode == 0
    from_url = project.run("ci", "run", "--iterations", "6", "--seed", "9", "--baseline", f"file://{store}",
                           "--out", "url")
    assert from_url.returncode == 1, from_url.stderr
    url_doc = load(project.root / "url" / "result.json")
    assert url_doc["ci"]["baseline"]["regressions"] == regressions
    assert url_doc["ci"]["baseline"]["tag_or_source"].endswith("@main")
    # --fail-on never reports the same and exits 0.
    never = project.run("ci", "run", "--iterations", "6", "--seed", "9", "--baseline", "main", "--fail-on", "never",
                        "--out", "never")
    assert never.returncode == 0
    assert load(project.root / "never" / "result.json")["passed"] is False


def test_no_store_still_reads_the_stored_baseline(project):
    correct(project)
    assert project.run("ci", "run", "--iterations", "6", "--seed", "9", "--out", "before").returncode == 0
    assert project.run("baseline", "store", "main").returncode == 0
    runs_before = project.run("--format", "json", "results").stdout
    buggy(project)
    proc = project.run("--no-store", "ci", "run", "--iterations", "6", "--seed", "9", "--baseline", "main",
                       "--fail-on", "regressions", "--out", "after")
    assert proc.returncode == 1, proc.stderr
    regressions = load(project.root / "after" / "result.json")["ci"]["baseline"]["regressions"]
    assert [(r["op"], r["dtype"]) for r in regressions] == [("op", "float32")]
    assert "no baseline" not in proc.stderr
    # --no-store wrote nothing: the store's history is what it was.
    assert project.run("--format", "json", "results").stdout == runs_before


def test_no_store_with_no_database_creates_none(project):
    correct(project)
    proc = project.run("--no-store", "ci", "run", "--iterations", "2", "--baseline", "main", "--out", "out")
    assert proc.returncode == 0, proc.stderr
    assert "no baseline 'main'" in proc.stderr
    assert not (project.home / "db" / "gpuemu.db").exists()


def test_fail_on_regressions_lets_known_failures_pass(project):
    buggy(project)
    assert project.run("ci", "run", "--iterations", "6", "--seed", "9", "--out", "before").returncode == 1
    assert project.run("baseline", "store", "known").returncode == 0
    proc = project.run("ci", "run", "--iterations", "6", "--seed", "9", "--baseline", "known",
                       "--fail-on", "regressions", "--out", "out")
    assert proc.returncode == 0, proc.stderr
    result = load(project.root / "out" / "result.json")
    assert result["ci"]["baseline"]["regressions"] == [] and result["passed"] is False


def test_missing_baseline_is_a_warning_not_a_failure(project):
    correct(project)
    proc = project.run("ci", "run", "--iterations", "3", "--baseline", "nope", "--out", "out")
    assert proc.returncode == 0, proc.stderr
    assert "no baseline 'nope'" in proc.stderr
    baseline = load(project.root / "out" / "result.json")["ci"]["baseline"]
    assert baseline["regressions"] == [] and any("nope" in w for w in baseline["warnings"])
    url = project.run("ci", "run", "--iterations", "3", "--baseline", f"file://{project.root}/empty", "--out", "u")
    assert url.returncode == 0, url.stderr
    assert load(project.root / "u" / "result.json")["ci"]["baseline"]["warnings"]


def test_sign_key_writes_a_report_that_verifies(project):
    correct(project)
    assert project.run("keygen", "--out", "keys").returncode == 0
    proc = project.run("ci", "run", "--iterations", "3", "--sign-key", "keys/gpuemu.key", "--out", "out")
    assert proc.returncode == 0, proc.stderr
    verify = project.run("report", "verify", "out/REPORT.json", "--pub", "keys/gpuemu.pub", "--artifacts", ".")
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_on_a_github_runner(project, tmp_path):
    buggy(project)
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    summary.write_text("# earlier step\n")
    env = {"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(project.root), "GITHUB_STEP_SUMMARY": str(summary),
           "GITHUB_OUTPUT": str(output)}
    proc = project.run("ci", "run", "--iterations", "8", "--seed", "2", "--out", "out", env=env)
    assert proc.returncode == 1, proc.stderr
    errors = [line for line in proc.stdout.splitlines() if line.startswith("::error ")]
    assert 1 <= len(errors) <= 10
    assert "file=op_off_by_tail.py,line=7" in errors[0] and "gpuemu reproduce" in errors[0]
    # Script output is shown between stop-commands markers with a random token, never executed.
    tokens = re.findall(r"^::stop-commands::(\w+)$", proc.stdout, re.M)
    assert all(f"::{t}::" in proc.stdout for t in tokens)
    outputs = parse_outputs(output.read_text())
    result = load(project.root / "out" / "result.json")
    failed = sum(op["failed"] + op["errors"] for op in result["ops"])
    assert outputs == {"passed": "false", "failed": str(failed), "not_run": "0", "result": "out/result.json"}
    text = summary.read_text()
    assert text.startswith("# earlier step\n") and "gpuemu reproduce" in text


def test_policy_pack_sets_the_ci_budget(project, tmp_path):
    correct(project)
    pack = tmp_path / "tiny.toml"
    pack.write_text("[ci]\nfuzz_iterations = 3\n")
    proc = project.run("ci", "run", "--policy", str(pack), "--out", "out")
    assert proc.returncode == 0, proc.stderr
    plain = project.run("ci", "run", "--iterations", "3", "--out", "plain")
    with_pack = load(project.root / "out" / "result.json")
    assert with_pack["ops"][0]["total"] == 2 + 3
    # The pack's values are part of what the run was judged by: the digest changes.
    assert with_pack["config_digest"] != load(project.root / "plain" / "result.json")["config_digest"]
    assert plain.returncode == 0


KERNELS = REPO / "tests" / "kernels"
NO_TOOLS = {"GPUEMU_PTXAS": "none", "GPUEMU_NVCC": "none", "GPUEMU_CUOBJDUMP": "none", "GPUEMU_NVDISASM": "none"}


def with_kernels(project, checks):
    kdir = project.root / "kernels"
    kdir.mkdir(exist_ok=True)
    for name in ("saxpy.ptx", "saxpy_local.ptx"):
        shutil.copy(KERNELS / name, kdir / name)
    kernels = f"""
[[kernels]]
name = "saxpy"
source = "kernels/saxpy.ptx"

[[kernels]]
name = "saxpy_local"
source = "kernels/saxpy_local.ptx"

[kernels.artifact_checks]
max_registers = 255
max_local_memory_bytes = 1024
{checks}
"""
    toml = one_op_toml("op_identity.py", validation=FAST) + kernels
    return project.write(toml, ["op_identity.py", "ref_identity.py"])


def test_lint_violations_are_in_every_report(project, tmp_path):
    with_kernels(project, 'forbidden_instructions = ["ld.local"]')
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    env = dict(NO_TOOLS, GITHUB_ACTIONS="true", GITHUB_WORKSPACE=str(project.root),
               GITHUB_STEP_SUMMARY=str(summary), GITHUB_OUTPUT=str(output))
    proc = project.run("ci", "run", "--iterations", "3", "--out", "out", env=env)
    assert proc.returncode == 1, proc.stderr
    out = project.root / "out"
    result = load(out / "result.json")
    jsonschema.validate(result, load(SCHEMAS / "result-v1.schema.json"))
    assert result["ops"][0]["failed"] == 0 and result["passed"] is False
    lint = result["ci"]["lint"]
    assert lint["passed"] is False
    assert [(k["name"], k["passed"]) for k in lint["kernels"]] == [("saxpy", True), ("saxpy_local", False)]
    violation = lint["kernels"][1]["violations"][0]
    # The PTX's .loc lines lead to the CUDA source it was compiled from (tests/kernels/saxpy_local.cu).
    assert violation["check"] == "forbidden_instructions" and violation["file"].endswith("saxpy_local.cu")
    # SARIF: one GPUEMU-LINT result at the offending PTX line.
    sarif = load(out / "gpuemu.sarif")
    jsonschema.validate(sarif, load(SCHEMAS / "sarif-2.1.0.json"))
    [alert] = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "GPUEMU-LINT"]
    physical = alert["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"].endswith("saxpy_local.cu")
    assert physical["region"]["startLine"] == violation["line"] > 0
    assert "gpuemu lint --kernel saxpy_local" in alert["message"]["text"]
    # JUnit: a lint suite with a failing testcase for the kernel, valid against the schema.
    xmllint_valid(out / "junit.xml", SCHEMAS / "junit.xsd")
    junit = (out / "junit.xml").read_text()
    assert 'name="gpuemu lint"' in junit and 'name="lint saxpy_local"' in junit and "ld.local" in junit
    # Summary, annotation and text output.
    assert "### Kernel lint" in (out / "summary.md").read_text() and "### Kernel lint" in summary.read_text()
    [annotation] = [line for line in proc.stdout.splitlines() if line.startswith("::error ")]
    # The .cu lies outside GITHUB_WORKSPACE, where GitHub cannot place an annotation: no file= then.
    assert "saxpy_local[forbidden_instructions]" in annotation and "file=" not in annotation
    assert "Replay: gpuemu lint --kernel saxpy_local" in annotation
    assert "FAIL lint saxpy_local" in (out / "summary.txt").read_text()


def test_passing_lint_keeps_the_run_green_and_only_shard_1_lints(project):
    with_kernels(project, "")
    proc = project.run("ci", "run", "--iterations", "4", "--out", "out", env=NO_TOOLS)
    assert proc.returncode == 0, proc.stderr
    assert load(project.root / "out" / "result.json")["ci"]["lint"]["passed"] is True
    for i in (1, 2):
        assert project.run("ci", "run", "--iterations", "4", "--shard", f"{i}/2", "--out", f"s{i}",
                           env=NO_TOOLS).returncode == 0
    assert load(project.root / "s1" / "result.json")["ci"]["lint"] is not None
    assert load(project.root / "s2" / "result.json")["ci"]["lint"] is None
    assert project.run("report", "merge", "s1", "s2", "--out", "merged").returncode == 0
    assert load(project.root / "merged" / "result.json")["ci"]["lint"] == \
        load(project.root / "out" / "result.json")["ci"]["lint"]


def test_baseline_tag_picks_the_tag_fetched_from_a_url(project):
    correct(project)
    assert project.run("ci", "run", "--iterations", "4", "--seed", "9", "--out", "before").returncode == 0
    assert project.run("baseline", "store", "nightly").returncode == 0
    store = project.root / "remote"
    assert project.run("baseline", "push", "nightly", f"file://{store}", "--force").returncode == 0
    buggy(project)
    # The default tag (main) is not in the store: a warning, no comparison.
    default = project.run("ci", "run", "--iterations", "4", "--seed", "9", "--baseline", f"file://{store}",
                          "--fail-on", "regressions", "--out", "default")
    assert default.returncode == 0, default.stderr
    assert load(project.root / "default" / "result.json")["ci"]["baseline"]["regressions"] == []
    tagged = project.run("ci", "run", "--iterations", "4", "--seed", "9", "--baseline", f"file://{store}",
                         "--baseline-tag", "nightly", "--fail-on", "regressions", "--out", "tagged")
    assert tagged.returncode == 1, tagged.stderr
    baseline = load(project.root / "tagged" / "result.json")["ci"]["baseline"]
    assert baseline["tag_or_source"].endswith("@nightly") and baseline["regressions"]
