"""The pytest plugin (gpuemu.testing, docs/pytest.md) run by pytester in a subprocess, against the
real kernels of examples/ and the real gpuemu binary: a correct kernel passes under several seeds,
a buggy one fails with the replay command, the failure lands in the store, and `gpuemu reproduce`
on the printed seed reproduces it; plus ids, options, inline specs, minimizing and pytest-xdist.
"""
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

REPO_ROOT = Path(__file__).resolve().parents[2]
# Autoloaded once `pip install gpuemu` has registered the entry point; named explicitly before that.
REGISTERED = any(ep.name == "gpuemu" for ep in importlib.metadata.entry_points(group="pytest11"))
PLUGIN = [] if REGISTERED else ["-p", "gpuemu.testing.plugin"]
FAILURE = re.compile(r"gpuemu: op (\S+) case seed (\d+) \((\w+), \w+, \w+ values; case (\d+) of master seed (\d+)\)")


@pytest.fixture
def project(pytester, tmp_path):
    """A copy of examples/ as the pytester project, with a private GPUEMU_HOME."""
    shutil.copytree(REPO_ROOT / "examples", pytester.path, dirs_exist_ok=True)
    home = tmp_path / "home"
    home.mkdir()
    pytester._monkeypatch.setenv("GPUEMU_HOME", str(home))
    pytester._monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(REPO_ROOT / "python"), *filter(None, [os.environ.get("PYTHONPATH")])]))
    return pytester


def run(pytester, *args):
    return pytester.runpytest_subprocess(*PLUGIN, "-p", "no:cacheprovider", *args, timeout=600)


def cli(binary, pytester, *args):
    return subprocess.run([str(binary), "--config", "gpuemu.toml", *args], cwd=pytester.path, capture_output=True,
                          text=True, timeout=300, env=os.environ.copy())


EXAMPLE_TESTS = '''
import pytest
from gpuemu.worker import load_script

softmax = load_script("kernels/softmax.py")[0]


@pytest.mark.gpuemu("softmax")
def test_softmax_explicit_kernel(gpuemu_case):
    gpuemu_case.run(softmax)


@pytest.mark.gpuemu("matmul")
def test_matmul_own_op_script(gpuemu_case):
    gpuemu_case.run()
'''

BUGGY_TEST = '''
import pytest


@pytest.mark.gpuemu("softmax_tail_bug")
def test_softmax_tail_bug(gpuemu_case):
    gpuemu_case.run()
'''


@pytest.mark.parametrize("seed", ["1", "2", "77"])
def test_correct_kernels_pass_under_several_seeds(project, seed):
    project.makepyfile(test_examples=EXAMPLE_TESTS)
    result = run(project, "--gpuemu-seed", seed, "--gpuemu-iterations", "12", "--gpuemu-store", "off")
    result.assert_outcomes(passed=24)
    assert f"gpuemu: master seed {seed} (--gpuemu-seed)" in result.stdout.str()


def test_ids_carry_op_dtype_shapes_and_seed_and_match_the_cli_cases(project, gpuemu_bin):
    project.makepyfile(test_examples=EXAMPLE_TESTS)
    result = run(project, "--collect-only", "-q", "--gpuemu-seed", "5", "--gpuemu-iterations", "6")
    ids = re.findall(r"test_matmul_own_op_script\[(.+)\]", result.stdout.str())
    assert len(ids) == 6
    for case_id in ids:
        assert re.fullmatch(r"matmul-(float32|float16|bfloat16)-a_\d+x\d+-b_\d+x\d+-seed_\d+", case_id), case_id
    # Each id's seed regenerates, in the CLI, a case of that dtype and those shapes.
    for case_id in ids:
        seed = case_id.rsplit("_", 1)[1]
        replay = cli(gpuemu_bin, project, "--no-store", "--format", "json", "reproduce", seed, "--op", "matmul")
        doc = json.loads(replay.stdout)
        shapes = "-".join(f"{n}_{'x'.join(map(str, s))}" for n, s in doc["shapes"].items())
        assert case_id == f"matmul-{doc['dtype']}-{shapes}-seed_{seed}"


def test_a_buggy_kernel_fails_with_the_replay_command_and_gpuemu_reproduces_it(project, gpuemu_bin):
    project.makepyfile(test_bug=BUGGY_TEST)
    result = run(project, "--gpuemu-seed", "3", "--gpuemu-iterations", "8", "--gpuemu-bin", str(gpuemu_bin))
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) >= 1, result.stdout.str()
    out = result.stdout.str()
    op, seed, dtype, index, master = FAILURE.search(out).groups()
    assert (op, master) == ("softmax_tail_bug", "3")
    assert "worst out[" in out and "got " in out and "expected " in out
    assert f"gpuemu --config gpuemu.toml reproduce {seed} --op softmax_tail_bug" in out
    assert f"gpuemu --config gpuemu.toml show {seed}" in out
    assert re.search(rf"pytest 'test_bug.py::test_softmax_tail_bug\[softmax_tail_bug-{dtype}-x_\d+x\d+-seed_{seed}\]' "
                     r"--gpuemu-seed 3", out)
    assert f"store: stored as failure {seed} of op softmax_tail_bug (mismatch)" in out
    assert "stopped the daemon this session started" in out
    # The printed command reproduces it: regenerated from the seed, and from the store without --op.
    again = cli(gpuemu_bin, project, "reproduce", seed, "--op", "softmax_tail_bug")
    assert again.returncode == 1, again.stdout + again.stderr
    assert f"FAIL seed {seed} op softmax_tail_bug: {dtype}" in again.stdout
    stored = cli(gpuemu_bin, project, "reproduce", seed)
    assert stored.returncode == 1, stored.stdout + stored.stderr
    failures = json.loads(cli(gpuemu_bin, project, "--format", "json", "failures").stdout)["failures"]
    assert {(f["op"], f["seed"]) for f in failures} >= {("softmax_tail_bug", seed)}
    assert len(failures) == outcomes["failed"]


def test_minimize_shows_and_stores_the_smallest_failing_case(project, gpuemu_bin):
    project.makepyfile(test_bug=BUGGY_TEST)
    # The op's corner cases (x [1, 1], [1, 33], [33, 1]) run first and are minimal already: leave them out.
    result = run(project, "--gpuemu-seed", "3", "--gpuemu-iterations", "8", "--gpuemu-minimize", "-x",
                 "--gpuemu-bin", str(gpuemu_bin), "-k", "not x_1x1- and not x_1x33- and not x_33x1-")
    out = result.stdout.str()
    minimized = re.search(r"minimized \(\d+ steps\): x \[(\d+), (\d+)\]: mismatch", out)
    assert minimized, out
    original = re.search(r"inputs: x \[(\d+), (\d+)\]", out)
    assert int(minimized[1]) * int(minimized[2]) < int(original[1]) * int(original[2])
    small_seed = re.search(r"stored as failure (\d+) \(minimized from (\d+)\)", out)
    assert small_seed, out
    shown = cli(gpuemu_bin, project, "reproduce", small_seed[1])
    assert shown.returncode == 1, shown.stdout + shown.stderr
    assert f"input x [{minimized[1]}, {minimized[2]}]" in shown.stdout


INLINE_TESTS = '''
import numpy as np
import pytest
from gpuemu.testing import Op

RELU = Op("relu", reference=lambda inputs: np.maximum(inputs["x"].astype(np.float64), 0),
          schema={"dims": {"M": [1, 64], "N": [1, 300]}, "inputs": {"x": ["M", "N"]}},
          inputs={"x": {"domain": [-4.0, 4.0]}}, dtypes=["float32", "float16"], iterations=10)


@pytest.mark.gpuemu(RELU)
def test_relu(gpuemu_case):
    gpuemu_case.run(lambda inputs: np.maximum(inputs["x"], 0))


@pytest.mark.gpuemu(RELU)
def test_relu_that_leaks_negatives(gpuemu_case):
    x = gpuemu_case.inputs["x"]
    gpuemu_case.check(np.where(x > -1, np.maximum(x, 0), x))


@pytest.mark.gpuemu(RELU, iterations=2)
def test_relu_in_place(gpuemu_case):
    def in_place(inputs):
        np.maximum(inputs["x"], 0, out=inputs["x"])
        return inputs["x"]
    gpuemu_case.run(in_place)


@pytest.mark.gpuemu(RELU, iterations=1)
def test_forgets_to_check(gpuemu_case):
    assert gpuemu_case.inputs["x"].size > 0
'''


def test_an_op_declared_in_python(project):
    project.makepyfile(test_inline=INLINE_TESTS)
    result = run(project, "--gpuemu-seed", "9")
    out = result.stdout.str()
    assert "FAILED test_inline.py::test_relu[" not in out and result.parseoutcomes()["passed"] >= 10
    failed = set(re.findall(r"FAILED test_inline.py::(\w+)\[", out))
    assert failed == {"test_relu_that_leaks_negatives", "test_relu_in_place", "test_forgets_to_check"}
    assert "not stored: the op is declared in Python (gpuemu.testing.Op)" in out
    assert "input_mutated" in out and "run_op wrote into its input 'x': " in out
    assert "never called gpuemu_case.run(kernel) or gpuemu_case.check(output): the case checked nothing" in out


def test_seeds_come_from_the_option_then_the_marker_then_the_config(project):
    project.makepyfile(test_seeds='''
import pytest

@pytest.mark.gpuemu("softmax", iterations=2)
def test_config_seed(gpuemu_case):
    gpuemu_case.run()

@pytest.mark.gpuemu("softmax", iterations=2, seed=7)
def test_marker_seed(gpuemu_case):
    gpuemu_case.run()
''')
    from gpuemu._internal.core.fuzz.cases import run_case_seed
    from gpuemu._internal.client.inline import InlineProject

    spec = InlineProject(project.path / "gpuemu.toml").op("softmax")
    ids = run(project, "--collect-only", "-q").stdout.str()
    assert f"test_config_seed[softmax-" in ids and f"seed_{run_case_seed(spec, 12345, 'fuzz', 0)}]" in ids
    assert f"seed_{run_case_seed(spec, 7, 'fuzz', 1)}]" in ids
    forced = run(project, "--collect-only", "-q", "--gpuemu-seed", "8").stdout.str()
    assert forced.count(f"seed_{run_case_seed(spec, 8, 'fuzz', 0)}]") == 2
    # The op's corner cases come first, as in `gpuemu fuzz` (docs/configuration.md "Corner cases").
    assert "x_1x1-seed_" in ids


def test_xdist_workers_collect_the_same_cases(project):
    """No fixed seed anywhere: the controller's session seed reaches every worker."""
    project.makepyfile(test_inline=INLINE_TESTS.split("@pytest.mark.gpuemu(RELU)\ndef test_relu_that")[0])
    result = run(project, "-n", "2", "-p", "xdist")
    result.assert_outcomes(passed=10)
    header = re.search(r"gpuemu: session seed (\d+)", result.stdout.str())
    assert header, result.stdout.str()


def test_usage_errors_name_the_fix(project):
    project.makepyfile(test_bad='''
import pytest

@pytest.mark.gpuemu("softmx")
def test_typo(gpuemu_case):
    gpuemu_case.run()
''')
    result = run(project)
    assert result.ret != 0
    assert "op 'softmx' is not in" in result.stderr.str() + result.stdout.str()
    assert "did you mean 'softmax'?" in result.stderr.str() + result.stdout.str()


def test_the_plugin_is_registered_by_the_package():
    """python/pyproject.toml's pytest11 entry point, which `pip install gpuemu` registers."""
    import tomllib

    meta = tomllib.loads((REPO_ROOT / "python" / "pyproject.toml").read_text())
    assert meta["project"]["entry-points"]["pytest11"] == {"gpuemu": "gpuemu.testing.plugin"}
    assert "gpuemu.testing" in meta["tool"]["setuptools"]["packages"]


TORCH_TESTS = '''
import pytest
import torch


@pytest.mark.gpuemu("softmax")
def test_torch_softmax(gpuemu_case):
    # torch tensors in, a torch tensor out (bfloat16 and float16 stay themselves)
    gpuemu_case.run(lambda inputs: torch.softmax(inputs["x"].float(), -1).to(inputs["x"].dtype),
                    framework="pytorch", device="cpu")


@pytest.mark.gpuemu("softmax", iterations=2)
def test_torch_softmax_in_place(gpuemu_case):
    def in_place(inputs):
        x = inputs["x"]
        out = torch.softmax(x.float(), -1).to(x.dtype)
        x.mul_(2)  # writes into the case's input: input_mutated, whatever the output
        return out
    gpuemu_case.run(in_place, framework="pytorch", device="cpu")


@pytest.mark.gpuemu("softmax")
def test_torch_softmax_over_the_wrong_dim(gpuemu_case):
    x = gpuemu_case.tensors("pytorch", device="cpu")["x"]
    assert isinstance(x, torch.Tensor) and str(x.dtype) == "torch." + gpuemu_case.dtype
    gpuemu_case.check(torch.softmax(x.float(), 0).to(x.dtype))
'''


def test_torch_tensors(project):
    # Only whether torch is installed: importing it here would leave it to pytester, which drops the
    # modules a test imported when it ends, and torch cannot be imported twice in one process.
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    project.makepyfile(test_torch=TORCH_TESTS)
    result = run(project, "--gpuemu-seed", "4", "--gpuemu-iterations", "8", "--gpuemu-store", "off")
    out = result.stdout.str()
    failed = re.findall(r"FAILED test_torch.py::(\w+)\[softmax-(\w+)-", out)
    assert {name for name, _ in failed} == {"test_torch_softmax_over_the_wrong_dim", "test_torch_softmax_in_place"}, out
    assert "input_mutated" in out and "run_op wrote into its input 'x': " in out and "the first at x[0, 0]" in out
    assert {dtype for name, dtype in failed if name.endswith("wrong_dim")} == {"float32", "float16", "bfloat16"}
    assert result.parseoutcomes()["passed"] >= 8


def test_pip_install_registers_the_plugin(tmp_path, pytester):
    """A wheel built from python/ and installed into a fresh directory: pytest autoloads the plugin
    from its pytest11 entry point, without -p."""
    wheels, site, source = tmp_path / "wheels", tmp_path / "site", tmp_path / "source"
    # A copy: setuptools writes build/ into the folder it builds.
    shutil.copytree(REPO_ROOT / "python" / "gpuemu", source / "gpuemu", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO_ROOT / "python" / "pyproject.toml", source)
    pip = ["python3", "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(source)],
                   check=True, capture_output=True, timeout=600)
    [wheel] = wheels.glob("gpuemu-*.whl")
    subprocess.run([*pip, "install", "--no-deps", "--no-index", "--target", str(site), str(wheel)],
                   check=True, capture_output=True, timeout=600)
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    env["PYTHONPATH"] = str(site)
    proc = subprocess.run(["python3", "-m", "pytest", "--help"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "--gpuemu-seed=SEED" in proc.stdout and "--gpuemu-minimize" in proc.stdout
    plugins = subprocess.run(["python3", "-c", "import importlib.metadata as m; print([e.value for e in "
                              "m.entry_points(group='pytest11') if e.name == 'gpuemu'])"],
                             env=env, capture_output=True, text=True, timeout=60).stdout
    assert "gpuemu.testing.plugin" in plugins


IMPLEMENTATIONS_TOML = '''
[validation]
dtypes = ["float32", "float16"]
seed = 5

[[ops]]
name = "softmax"
reference = "refs/softmax_ref.py"
implementations = ["kernels/softmax.py", { name = "tail", op_script = "kernels/softmax_tail_bug.py" }]

[ops.schema]
dims = { M = [1, 40], N = [1, 300] }
inputs = { x = ["M", "N"] }
output = ["M", "N"]

[ops.inputs.x]
domain = [-30.0, 30.0]
'''


def test_one_op_spec_with_implementations(project):
    """OP/IMPLEMENTATION names one kernel of an op spec (docs/configuration.md); both get the same cases."""
    (project.path / "impl").mkdir()
    (project.path / "impl" / "gpuemu.toml").write_text(IMPLEMENTATIONS_TOML)
    shutil.copytree(project.path / "kernels", project.path / "impl" / "kernels")
    shutil.copytree(project.path / "refs", project.path / "impl" / "refs")
    project.makepyfile(test_impl='''
import pytest

@pytest.mark.gpuemu("softmax/softmax", config="impl/gpuemu.toml", iterations=6)
def test_v1(gpuemu_case):
    gpuemu_case.run()

@pytest.mark.gpuemu("softmax/tail", config="impl/gpuemu.toml", iterations=6)
def test_tail(gpuemu_case):
    gpuemu_case.run()
''')
    result = run(project, "--gpuemu-store", "off")
    out = result.stdout.str()
    assert "FAILED test_impl.py::test_v1" not in out and "FAILED test_impl.py::test_tail[softmax/tail-" in out
    v1 = re.findall(r"test_v1\[softmax/softmax-(\S+)\]", run(project, "--collect-only", "-q").stdout.str())
    tail = re.findall(r"test_tail\[softmax/tail-(\S+)\]", run(project, "--collect-only", "-q").stdout.str())
    assert v1 == tail and len(v1) == 6  # the same cases: seeds come from the op spec, not the kernel
    project.makepyfile(test_impl='''
import pytest

@pytest.mark.gpuemu("softmax", config="impl/gpuemu.toml")
def test_which(gpuemu_case):
    gpuemu_case.run()
''')
    which = run(project, "--gpuemu-store", "off")
    text = which.stdout.str() + which.stderr.str()
    assert "name one implementation of 'softmax' in the marker (known: softmax/softmax, softmax/tail)" in text
