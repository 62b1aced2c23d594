"""One op spec, many implementations, end to end with the real binary: results named op/impl in every
report, `--op` by op or implementation, shared case seeds, reproduce and minimize per implementation,
load-time checks of callables (exit 2 at the key, once per run) and the source inferred from them.
"""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from e2e_support import REPO

SCHEMA = json.loads((REPO / "tests" / "schemas" / "result-v1.schema.json").read_text())

KERNELS = '''
import numpy as np


def v1(inputs, **kwargs):
    return inputs["x"] * np.float32(2.0)


def v2_tail_bug(inputs, **kwargs):
    y = inputs["x"] * np.float32(2.0)
    y[..., -1] += 1.0   # the last column is wrong whatever the shape
    return y


def off_by_one(inputs, **kwargs):
    return inputs["x"] * np.float32(2.0) + np.float32(1.0)


NOT_A_FUNCTION = 3
'''

REFS = '''
import numpy as np


def double(inputs, **kwargs):
    return np.asarray(inputs["x"], dtype=np.float64) * 2.0
'''

HEAD = """
[project]
name = "impls"

[validation]
dtypes = ["float32"]
seed = 7
timeout = 20
"""

SPEC = """
[[ops]]
name = "double"
reference = "refs.twice:double"
implementations = [IMPLS]

[ops.schema]
dims = { M = [1, 6], N = [1, 40] }
inputs = { x = ["M", "N"] }
"""


def spec(*impls):
    return SPEC.replace("IMPLS", ", ".join(f'"{i}"' for i in impls))


@pytest.fixture
def impls(project):
    (project.root / "kernels").mkdir()
    (project.root / "refs").mkdir()
    (project.root / "kernels" / "__init__.py").write_text("")
    (project.root / "refs" / "__init__.py").write_text("")
    (project.root / "kernels" / "double.py").write_text(KERNELS)
    (project.root / "refs" / "twice.py").write_text(REFS)
    project.env = {"PYTHONPATH": os.pathsep.join([str(REPO / "python"), os.environ.get("PYTHONPATH", "")]),
                   "GPUEMU_PYTHON": os.environ.get("GPUEMU_PYTHON", sys.executable)}
    return project


def run(project, *args, **kwargs):
    return project.run(*args, env=project.env, **kwargs)


def fuzz_json(project, *args):
    proc = run(project, "fuzz", "--iterations", "12", "--format", "json", *args)
    return proc, json.loads(proc.stdout)


def test_each_implementation_is_a_result_on_the_same_cases(impls):
    impls.write(HEAD + spec("kernels.double:v1", "kernels.double:v2_tail_bug", "kernels.double:off_by_one"))
    proc, doc = fuzz_json(impls)
    assert proc.returncode == 1, proc.stderr
    jsonschema.validate(doc, SCHEMA)
    by_name = {op["op"]: op for op in doc["ops"]}
    assert sorted(by_name) == ["double/off_by_one", "double/v1", "double/v2_tail_bug"]
    assert by_name["double/v1"]["passed"] == 12
    assert by_name["double/v1"]["spec"] == "double"
    assert by_name["double/v1"]["implementation"] == "v1"
    assert by_name["double/v2_tail_bug"]["failed"] == 12
    # Seeds come from the op, not the implementation: both buggy kernels failed the same 12 cases.
    seeds = lambda name: [f["seed"] for f in by_name[name]["failures"]]  # noqa: E731
    assert seeds("double/v2_tail_bug") == seeds("double/off_by_one")
    assert all(f["replay"].endswith("--op double/v2_tail_bug") for f in by_name["double/v2_tail_bug"]["failures"])
    # The source is inferred from each callable: kernels/double.py and the def line.
    assert by_name["double/v1"]["source"] == "kernels/double.py:5"
    assert by_name["double/v2_tail_bug"]["source"] == "kernels/double.py:9"


def test_op_selects_an_op_or_one_implementation(impls):
    impls.write(HEAD + spec("kernels.double:v1", "kernels.double:v2_tail_bug"))
    proc, doc = fuzz_json(impls, "--op", "double")
    assert [op["op"] for op in doc["ops"]] == ["double/v1", "double/v2_tail_bug"]
    proc, doc = fuzz_json(impls, "--op", "double/v1")
    assert proc.returncode == 0, proc.stderr
    assert [op["op"] for op in doc["ops"]] == ["double/v1"]
    proc = run(impls, "fuzz", "--op", "double/v3")
    assert proc.returncode == 2
    assert "unknown op 'double/v3' (did you mean 'double/v1'?)" in proc.stderr


def test_reports_name_op_and_implementation(impls):
    impls.write(HEAD + spec("kernels.double:v1", "kernels.double:v2_tail_bug"))
    text = run(impls, "fuzz", "--iterations", "4")
    assert "double/v2_tail_bug" in text.stdout and "gpuemu reproduce" in text.stdout
    junit = run(impls, "fuzz", "--iterations", "4", "--format", "junit")
    suites = {s.get("name"): s for s in ET.fromstring(junit.stdout).iter("testsuite")}
    props = {p.get("name"): p.get("value") for p in suites["double/v2_tail_bug"].iter("property")}
    assert props["op"] == "double" and props["implementation"] == "v2_tail_bug"
    assert props["source"] == "kernels/double.py:9"
    sarif = json.loads(run(impls, "fuzz", "--iterations", "4", "--format", "sarif").stdout)
    result = sarif["runs"][0]["results"][0]
    assert result["properties"]["op"] == "double/v2_tail_bug"
    physical = result["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"].endswith("kernels/double.py")
    assert physical["region"]["startLine"] == 9
    markdown = run(impls, "fuzz", "--iterations", "4", "--format", "markdown").stdout
    assert "double/v2_tail_bug" in markdown


def test_reproduce_and_minimize_work_per_implementation(impls):
    impls.write(HEAD + spec("kernels.double:v1", "kernels.double:v2_tail_bug"))
    proc, doc = fuzz_json(impls)
    failure = next(op for op in doc["ops"] if op["op"] == "double/v2_tail_bug")["failures"][0]
    seed = failure["seed"]
    again = run(impls, "reproduce", seed, "--op", "double/v2_tail_bug", "--format", "json")
    assert again.returncode == 1, again.stderr
    assert json.loads(again.stdout)["op"] == "double/v2_tail_bug"
    # The same seed is a passing case of v1: it is the same case, and v1 is correct.
    good = run(impls, "reproduce", seed, "--op", "double/v1", "--format", "json")
    assert good.returncode == 0, good.stderr
    # Naming only the op replays the implementation that stored the failure.
    by_op = run(impls, "reproduce", seed, "--op", "double", "--format", "json")
    assert by_op.returncode == 1 and json.loads(by_op.stdout)["op"] == "double/v2_tail_bug"
    shrunk = run(impls, "minimize", seed, "--op", "double/v2_tail_bug", "--format", "json")
    assert shrunk.returncode == 0, shrunk.stderr
    minimized = json.loads(shrunk.stdout)
    assert minimized["kind"] == "mismatch" and minimized["stored"] is True
    assert minimized["minimized"]["dims"] == {"M": 1, "N": 1}
    # The store lists an op's failures under its implementations' names.
    listed = json.loads(run(impls, "failures", "--op", "double", "--limit", "0", "--format", "json").stdout)
    assert listed["failures"] and {f["op"] for f in listed["failures"]} == {"double/v2_tail_bug"}
    results = json.loads(run(impls, "results", "--op", "double", "--limit", "0", "--format", "json").stdout)
    assert {r["op"] for r in results["results"]} == {"double/v1", "double/v2_tail_bug"}
    # Not in the store and several implementations: the command asks which one.
    unknown = run(impls, "reproduce", "999", "--op", "double")
    assert unknown.returncode == 2
    assert "several implementations (double/v1, double/v2_tail_bug); pass --op double/v1" in unknown.stderr


def test_extends_makes_an_op_of_its_own(impls):
    impls.write(HEAD + spec("kernels.double:v1") + """
[[ops]]
name = "double_wide"
extends = "double"
implementations = ["kernels.double:off_by_one"]
[ops.inputs.x]
domain = [-100.0, 100.0]
""")
    proc, doc = fuzz_json(impls)
    assert [op["op"] for op in doc["ops"]] == ["double/v1", "double_wide/off_by_one"]
    assert doc["ops"][1]["failed"] == 12 and doc["ops"][0]["passed"] == 12


def load_error(project, callable_spec, key="reference"):
    toml = HEAD + spec("kernels.double:v1")
    toml = toml.replace('reference = "refs.twice:double"', f'reference = "{callable_spec}"') if key == "reference" \
        else toml.replace('"kernels.double:v1"', f'"{callable_spec}"')
    project.write(toml)
    proc = run(project, "fuzz", "--iterations", "12", "--format", "json")
    return proc


@pytest.mark.parametrize("callable_spec, python_error, hint", [
    ("refs.missing:double", "ModuleNotFoundError: No module named 'refs.missing'", "check its dotted name"),
    ("refs.twice:triple", "AttributeError: module 'refs.twice' has no attribute 'triple'", "check the function's name"),
    # The module exists but imports a package that is not installed: the hint says to install it.
    ("refs.needs_dep:double", "ModuleNotFoundError: No module named 'gpuemu_absent_dep'",
     "the code imports 'gpuemu_absent_dep', which this Python cannot import: install it; in the GitHub Action"),
])
def test_a_reference_that_does_not_load_is_a_config_error_at_its_key(impls, callable_spec, python_error, hint):
    (impls.root / "refs").mkdir(exist_ok=True)
    (impls.root / "refs" / "needs_dep.py").write_text("import gpuemu_absent_dep\n")
    proc = load_error(impls, callable_spec)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    path = str(impls.root / "gpuemu.toml")
    first = proc.stderr.splitlines()
    line = next(i for i, text in enumerate(first) if ": error: " in text)
    assert first[line] == (f"{path}:12:13: error: reference '{callable_spec}' of op 'double/v1' does not load: "
                           f"{python_error}")
    assert first[line + 1] == f'reference = "{callable_spec}"'
    assert first[line + 2] == "            ^"
    assert first[line + 3].startswith("hint: ") and hint in first[line + 3], first[line + 3]


def test_an_op_that_is_not_callable_is_a_config_error(impls):
    proc = load_error(impls, "kernels.double:NOT_A_FUNCTION", key="op")
    assert proc.returncode == 2, proc.stderr
    assert ("13:20: error: implementation 'kernels.double:NOT_A_FUNCTION' of op 'double/NOT_A_FUNCTION' does not load: "
            "TypeError: kernels.double:NOT_A_FUNCTION is a int, not a function") in proc.stderr
    assert "hint: name a function" in proc.stderr


def test_the_load_check_imports_once_per_run_not_per_case(impls):
    (impls.root / "refs" / "broken.py").write_text(
        "import os\n"
        "with open(os.path.join(os.path.dirname(__file__), 'imports.log'), 'a') as log:\n"
        "    log.write('import\\n')\n"
        "raise ImportError('the extension module _fast is missing')\n")
    proc = load_error(impls, "refs.broken:double")
    assert proc.returncode == 2, proc.stderr
    assert "ImportError: the extension module _fast is missing" in proc.stderr
    assert (impls.root / "refs" / "imports.log").read_text() == "import\n"  # 1 import, not 12 cases


def test_only_the_selected_ops_are_checked(impls):
    impls.write(HEAD + spec("kernels.double:v1") + """
[[ops]]
name = "broken"
reference = "refs.twice:double"
op_script = "kernels.nowhere:fn"
""")
    proc, doc = fuzz_json(impls, "--op", "double")
    assert proc.returncode == 0, proc.stderr
    proc = run(impls, "fuzz", "--iterations", "2")
    assert proc.returncode == 2
    assert "op under test 'kernels.nowhere:fn' of op 'broken' does not load: ModuleNotFoundError" in proc.stderr


def test_three_kernel_example_is_at_most_half_the_toml_and_finds_each_bug(tmp_path, gpuemu_bin):
    config = REPO / "examples" / "three-kernels" / "gpuemu.toml"
    lines = config.read_text().count("\n")
    assert lines <= 124 // 2, f"{config} has {lines} lines; the issue's one-table-per-kernel form had 124"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(REPO / "python"), env.get("PYTHONPATH", "")] if p)
    env.setdefault("GPUEMU_PYTHON", sys.executable)
    env["GPUEMU_HOME"] = str(tmp_path / "home")
    proc = subprocess.run([str(gpuemu_bin), "--config", str(config),
                           "--no-store", "fuzz", "--iterations", "100", "--format", "json"],
                          capture_output=True, text=True, env=env, timeout=1800)
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, SCHEMA)
    verdicts = {op["op"]: op["failed"] + op["errors"] == 0 for op in doc["ops"]}
    assert verdicts == {
        "attention/attention": True, "attention/attention_no_scale": False,
        "matmul/matmul": True, "matmul/matmul_acc_bug": False,
        "softmax/softmax": True, "softmax/softmax_tail_bug": False,
    }, proc.stderr[-3000:]
    assert proc.returncode == 1
