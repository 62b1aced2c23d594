# The CLI promises of the seed documents (configuration.txt, execution-modes.txt, faq.txt) run as
# written against the real binary: issue 31 items 3-7. The documents' own text is in seed_docs/.
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

import jsonschema
import pytest

from e2e_support import REPO

DOCS = pathlib.Path(__file__).resolve().parent / "seed_docs"
SCHEMAS = REPO / "tests" / "schemas"
NO_TOOLS = {"GPUEMU_PTXAS": "none", "GPUEMU_NVCC": "none", "GPUEMU_CUOBJDUMP": "none", "GPUEMU_NVDISASM": "none"}

# execution-modes.txt's config gives my_matmul no shapes; both inputs would take the default
# [4, 64], which no matmul accepts. The one line we add: a schema, inserted after its block.
MATMUL_SCHEMA = ('execution_mode = "daemon_orchestrated"\n'
                 '[ops.schema]\ndims = { M = [1, 8], K = [1, 8], N = [1, 8] }\n'
                 'inputs = { a = ["M", "K"], b = ["K", "N"] }\n')


def seed_project(project, toml_name, extra_validation=""):
    """project's root with seed_docs/ copied in and seed_docs/toml_name as its gpuemu.toml."""
    shutil.copytree(DOCS, project.root, dirs_exist_ok=True)
    text = (DOCS / toml_name).read_text()
    if extra_validation:
        text += "\n" + extra_validation
    (project.root / "gpuemu.toml").write_text(text)
    return project


def doc_json(proc):
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"stdout is not one JSON document (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")


# Items 3 and 7: execution-modes.txt's config loads; the CLI runs the script-based op and names
# the two ops a client runs, with why and how.
def test_execution_modes_config_loads_and_the_cli_names_what_it_leaves_out(project):
    seed_project(project, "execution_modes.toml")
    proc = project.run("test", "--cases", "2", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = doc_json(proc)
    assert [op["op"] for op in doc["ops"]] == ["my_softmax"] and doc["ops"][0]["passed"] == 2
    for name, mode, how in (("my_relu", "client_side", "validate_op"),
                            ("my_matmul", "daemon_orchestrated", "submit_output")):
        [line] = [line for line in proc.stderr.splitlines() if f"op '{name}'" in line]
        assert line.startswith("gpuemu test: ") and "is not run here" in line, line
        assert f"execution_mode '{mode}'" in line and how in line and "add op_script" in line, line
    # -v as well, and fuzz and ci run say the same.
    verbose = project.run("-v", "fuzz", "-n", "1", "--format", "json")
    assert verbose.returncode == 0 and "op 'my_matmul' is not run here" in verbose.stderr
    # Naming a client-run op, and a project of client-run ops only, are CLI cases:
    # tests/cli/cases/test_names_a_client_run_op.case, test_only_client_run_ops.case.


# Item 3, the Python side: the daemon serves the daemon-orchestrated op it has no op under test
# for; execution-modes.txt's single-case example runs against it: as written, the daemon refuses
# the op's default shapes with the schema to declare (issue 41); with that schema, it passes.
SINGLE = '''
from gpuemu import Client

client = Client()

# 1. Fetch a test case from the daemon
test_case = client.get_test_case("my_matmul", seed=42)

print(f"Seed: {test_case['seed']}")
print(f"Shape: {test_case['shape']}")
print(f"DType: {test_case['dtype']}")

# 2. Run your op with the generated inputs
a = test_case["inputs"]["a"]
b = test_case["inputs"]["b"]
output = a @ b  # Your GPU matmul here

# 3. Submit the output for validation
result = client.submit_output(
    "my_matmul",
    test_case["inputs"],
    output,
    seed=test_case["seed"],
)

print(f"Passed: {result.passed}, max_diff: {result.max_diff:.2e}")
'''


def test_daemon_orchestrated_example_runs_against_the_documents_config(project):
    seed_project(project, "execution_modes.toml")
    toml = project.root / "gpuemu.toml"
    home = pathlib.Path(tempfile.mkdtemp(prefix="gsd", dir="/tmp")) / "h"  # socket paths are short
    env = {"GPUEMU_HOME": str(home)}
    try:
        start = project.run("daemon", "start", "--background", env=env, timeout=120)
        assert start.returncode == 0, start.stderr
        run_env = dict(os.environ, GPUEMU_HOME=str(home), HOME=str(project.root),
                       PYTHONPATH=os.pathsep.join(filter(None, [str(REPO / "python"), os.environ.get("PYTHONPATH")])))
        # As the document writes it (no shapes): the daemon refuses the case, naming [ops.schema] and the
        # lines to write, instead of handing out two [4, 64] inputs that `a @ b` fails on.
        bare = subprocess.run([sys.executable, "-c", SINGLE], cwd=project.root, env=run_env, capture_output=True,
                              text=True, timeout=300)
        assert bare.returncode != 0 and "DaemonError" in bare.stderr, bare.stdout + bare.stderr
        assert "op 'my_matmul' has no [ops.schema], so each of its inputs (a, b) takes the default shape" in bare.stderr
        assert 'inputs = { a = ["M", "K"], b = ["K", "N"] }' in bare.stderr and "matmul" in bare.stderr
        assert "Shape:" not in bare.stdout  # no case was handed out
        toml.write_text(toml.read_text().replace('execution_mode = "daemon_orchestrated"\n', MATMUL_SCHEMA))
        proc = subprocess.run([sys.executable, "-c", SINGLE], cwd=project.root, env=run_env, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert "Passed: True" in proc.stdout, proc.stdout
        # A wrong output still fails (the other direction).
        wrong = subprocess.run([sys.executable, "-c", SINGLE.replace("output = a @ b", "output = a @ b + 1")],
                               cwd=project.root, env=run_env, capture_output=True, text=True, timeout=300)
        assert wrong.returncode == 0 and "Passed: False" in wrong.stdout, wrong.stdout + wrong.stderr
    finally:
        project.run("daemon", "stop", env=env, timeout=120)
        shutil.rmtree(home.parent, ignore_errors=True)


# Item 4 (and 6): configuration.txt's complete example with no CUDA toolkit.
def test_complete_example_ci_quick_skips_cu_lint_with_a_warning(project, tmp_path):
    seed_project(project, "configuration_complete.toml")
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    env = dict(NO_TOOLS, GITHUB_ACTIONS="true", GITHUB_WORKSPACE=str(project.root),
               GITHUB_STEP_SUMMARY=str(summary), GITHUB_OUTPUT=str(output))
    proc = project.run("ci", "run", "--quick", "-n", "1", "--out", "out", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = project.root / "out"
    result = json.loads((out / "result.json").read_text())
    jsonschema.validate(result, json.loads((SCHEMAS / "result-v1.schema.json").read_text()))
    assert result["passed"] is True
    # Every op ran its quick plan: float32 only, [validation] test_cases + 1 fuzz case.
    assert sorted(op["op"] for op in result["ops"]) == ["layernorm", "matmul", "softmax"]
    for op in result["ops"]:
        assert [d["dtype"] for d in op["dtypes"] if d["total"]] == ["float32"] and op["total"] == 4 + 1
    kernels = result["ci"]["lint"]["kernels"]
    assert [(k["name"], k["passed"]) for k in kernels] == [("matmul_kernel", True), ("softmax_kernel", True)]
    for k in kernels:
        assert "needs nvcc" in k["skipped"] and k["violations"] == [] and k["source"].startswith("kernels/")
        assert any(k["name"] in w and "artifact checks skipped" in w for w in result["warnings"])
    assert "⚠️ skipped" in (out / "summary.md").read_text() and "⚠️ skipped" in summary.read_text()
    junit = (out / "junit.xml").read_text()
    assert re.search(r'name="lint matmul_kernel"[^>]*>\s*<skipped message="[^"]*needs nvcc', junit), junit
    warnings = [line for line in proc.stdout.splitlines() if line.startswith("::warning ")]
    assert len(warnings) >= 2 and all("nvcc" in w for w in warnings[:2]), proc.stdout
    assert "gpuemu ci run: warning: kernel 'matmul_kernel': artifact checks skipped" in proc.stderr
    assert "SKIP lint softmax_kernel" in (out / "summary.txt").read_text()

    # `gpuemu test --quick` (configuration.txt's CI strategy) runs the same plan as ci run --quick.
    quick = project.run("test", "--quick", "--format", "json")
    assert quick.returncode == 0, quick.stderr
    quick_doc = doc_json(quick)
    assert quick_doc["command"] == "test"
    for op in quick_doc["ops"]:
        assert [d["dtype"] for d in op["dtypes"] if d["total"]] == ["float32"]
        assert op["total"] == 4 + 20  # test_cases + [ci] quick_iterations (default 20)

    # The other direction: a broken op still fails the gate when the lint is skipped.
    (project.root / "my_project" / "ops" / "softmax.py").write_text(
        "# softmax with a bug for the test: the last column is dropped from the sum.\n"
        "import torch\n\n\ndef softmax(inputs, **kwargs):\n    x = inputs[\"x\"]\n    e = torch.exp(x.float() - x.float().amax(-1, keepdim=True))\n"
        "    return (e / e[..., :-1].sum(-1, keepdim=True)).to(x.dtype)\n")
    broken = project.run("ci", "run", "--quick", "-n", "1", "--out", "broken", env=NO_TOOLS)
    assert broken.returncode == 1, broken.stderr
    failed = json.loads((project.root / "broken" / "result.json").read_text())
    assert failed["passed"] is False and [op["op"] for op in failed["ops"] if op["failed"]] == ["softmax"]
    assert all("skipped" in k for k in failed["ci"]["lint"]["kernels"])


# Item 5: faq.txt's "FAIL at seed 98765 ... gpuemu test --seed 98765".
def test_test_seed_of_a_stored_failure_replays_that_case(project):
    seed_project(project, "execution_modes.toml")
    op = project.root / "scripts" / "run_softmax.py"
    correct = op.read_text()
    op.write_text(correct.replace("output = e_x / e_x.sum(axis=-1, keepdims=True)",
                                  "output = e_x / (e_x.sum(axis=-1, keepdims=True) + 1)"))
    fuzz = project.run("fuzz", "--op", "my_softmax", "--iterations", "3", "--seed", "5", "--format", "json")
    assert fuzz.returncode == 1, fuzz.stderr
    seed = doc_json(fuzz)["ops"][0]["failures"][1]["seed"]

    again = project.run("test", "--seed", seed, "--format", "json")
    assert again.returncode == 1, again.stderr
    doc = doc_json(again)
    assert doc["command"] == "test" and doc["seed"] == seed
    [entry] = doc["ops"]
    assert entry["op"] == "my_softmax" and entry["total"] == 1 and entry["failures"][0]["seed"] == seed
    assert f"--seed {seed} is the case seed of a stored mismatch failure of op 'my_softmax'" in again.stderr
    assert f"gpuemu reproduce {seed}" in again.stderr

    op.write_text(correct)  # fixed: the same case now passes
    fixed = project.run("test", "--seed", seed)
    assert fixed.returncode == 0 and f"seed {seed} passes now" in fixed.stderr, fixed.stdout + fixed.stderr

    # A seed the store does not hold keeps its meaning: the master seed of a normal test run.
    master = project.run("test", "--seed", "98765", "--format", "json")
    assert master.returncode == 0 and "case seed" not in master.stderr
    assert doc_json(master)["seed"] == "98765" and doc_json(master)["ops"][0]["total"] == 4
