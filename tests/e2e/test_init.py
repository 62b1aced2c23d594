"""`gpuemu init` end to end: every template's project passes `gpuemu ci run` as written, a broken
stub fails it, the workflow passes actionlint, and init refuses to overwrite (or, with --force, does).
"""
import json
import os
import re
import shutil
import subprocess
import sys
from importlib.metadata import entry_points

import pytest

from e2e_support import REPO

TEMPLATES = {"elementwise": "silu", "row-reduction": "rmsnorm", "matmul": "matmul", "attention": "attention"}
FILES = ["gpuemu.toml", "kernels/{op}.py", "refs/{op}_ref.py", "kernels/__init__.py", "refs/__init__.py",
         ".github/workflows/gpuemu.yml", "tests/test_{op}.py"]


def gpuemu(binary, cwd, *args, timeout=900):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(REPO / "python"), env.get("PYTHONPATH", "")] if p)
    env.setdefault("GPUEMU_PYTHON", sys.executable)
    env["GPUEMU_HOME"] = str(cwd / ".gpuemu-home")
    env["HOME"] = str(cwd)
    return subprocess.run([str(binary), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_init_then_ci_run_passes(tmp_path, gpuemu_bin, template):
    op = TEMPLATES[template]
    init = gpuemu(gpuemu_bin, tmp_path, "init", "--template", template)
    assert init.returncode == 0, init.stderr
    for name in FILES:
        assert (tmp_path / name.format(op=op)).is_file(), name
    assert f'implementations = ["kernels.{op}:{op}"]' in (tmp_path / "gpuemu.toml").read_text()
    assert "uses: skelf/gpuemu-action@v1" in (tmp_path / ".github/workflows/gpuemu.yml").read_text()

    ci = gpuemu(gpuemu_bin, tmp_path, "ci", "run", "--out", "out")
    assert ci.returncode == 0, ci.stdout[-3000:] + ci.stderr[-3000:]
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    assert result["passed"] and [o["op"] for o in result["ops"]] == [f"{op}/{op}"]
    assert result["ops"][0]["total"] > 0
    assert result["ops"][0]["source"].startswith(f"kernels/{op}.py:")  # inferred from the callable


def test_a_wrong_stub_fails_the_generated_project(tmp_path, gpuemu_bin):
    assert gpuemu(gpuemu_bin, tmp_path, "init", "--template", "row-reduction").returncode == 0
    kernel = tmp_path / "kernels" / "rmsnorm.py"
    # The classic bug: forgetting eps changes nothing on most rows, but all-zero rows become NaN.
    kernel.write_text(kernel.read_text().replace("mean_square + np.float32(eps)", "mean_square"))
    ci = gpuemu(gpuemu_bin, tmp_path, "ci", "run", "--out", "out")
    assert ci.returncode == 1, ci.stderr[-3000:]


def pytest_in(project, binary, *args):
    """pytest as the user runs it in the project: the plugin comes from the installed package."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(REPO / "python"), env.get("PYTHONPATH", "")] if p)
    env.setdefault("GPUEMU_PYTHON", sys.executable)
    env.update(GPUEMU_HOME=str(project / ".gpuemu-home"), HOME=str(project), GPUEMU_BIN=str(binary))
    # An editable install older than the plugin has no pytest11 entry point: name the plugin then.
    registered = any(e.value == "gpuemu.testing.plugin" for e in entry_points(group="pytest11"))
    plugin = [] if registered else ["-p", "gpuemu.testing.plugin"]
    return subprocess.run([sys.executable, "-m", "pytest", "tests", "-q", "-p", "no:cacheprovider", *plugin, *args],
                          cwd=project, env=env, capture_output=True, text=True, timeout=600)


def test_init_then_pytest_fails_a_broken_kernel_with_a_command_that_replays_it(tmp_path, gpuemu_bin):
    """The issue's path for a new user: init, pytest green, break the kernel, pytest red with the
    replay command, which reproduces the failure from the store."""
    assert gpuemu(gpuemu_bin, tmp_path, "init").returncode == 0  # elementwise: silu
    green = pytest_in(tmp_path, gpuemu_bin, "--gpuemu-iterations", "6")
    assert green.returncode == 0, green.stdout[-3000:] + green.stderr[-3000:]
    assert "6 passed" in green.stdout
    kernel = tmp_path / "kernels" / "silu.py"
    kernel.write_text(kernel.read_text().replace("np.exp(-x32)", "np.exp(x32)"))  # sigmoid(-x): a sign slip
    red = pytest_in(tmp_path, gpuemu_bin, "--gpuemu-iterations", "6")
    assert red.returncode == 1, red.stdout[-3000:] + red.stderr[-3000:]
    assert "FAILED tests/test_silu.py::test_silu[silu/silu-" in red.stdout
    replay = re.search(r"gpuemu --config (\S+) reproduce (\d+) --op (\S+)", red.stdout)
    assert replay, red.stdout[-3000:]
    again = gpuemu(gpuemu_bin, tmp_path, "--config", replay[1], "reproduce", replay[2], "--op", replay[3])
    assert again.returncode == 1, again.stdout + again.stderr
    assert f"FAIL seed {replay[2]} op silu/silu" in again.stdout


def test_the_workflow_passes_actionlint(tmp_path, gpuemu_bin):
    actionlint = shutil.which("actionlint") or next(
        (p for p in ["/root/go/bin/actionlint", os.path.expanduser("~/go/bin/actionlint")] if os.path.exists(p)), None)
    if actionlint is None:
        if os.environ.get("CI") == "true":  # as test_action.py: CI must lint the workflow init writes
            pytest.fail("actionlint is not installed (scripts/install-deps.sh installs it with go install)")
        pytest.skip("actionlint is not installed")
    assert gpuemu(gpuemu_bin, tmp_path, "init").returncode == 0
    proc = subprocess.run([actionlint, "-shellcheck=", str(tmp_path / ".github/workflows/gpuemu.yml")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_init_refuses_to_overwrite_and_names_the_files(tmp_path, gpuemu_bin):
    (tmp_path / "kernels").mkdir()
    (tmp_path / "gpuemu.toml").write_text("# mine\n")
    (tmp_path / "kernels" / "matmul.py").write_text("# my kernel\n")
    proc = gpuemu(gpuemu_bin, tmp_path, "init", "--template", "matmul")
    assert proc.returncode == 2  # the message: tests/cli/cases/init_would_overwrite.case
    # Nothing was written: not the existing files, not the missing ones.
    assert (tmp_path / "gpuemu.toml").read_text() == "# mine\n"
    assert (tmp_path / "kernels" / "matmul.py").read_text() == "# my kernel\n"
    assert not (tmp_path / "refs").exists() and not (tmp_path / ".github").exists()

    forced = gpuemu(gpuemu_bin, tmp_path, "init", "--template", "matmul", "--force")
    assert forced.returncode == 0, forced.stderr
    assert "[[ops]]" in (tmp_path / "gpuemu.toml").read_text()
    assert "def matmul(" in (tmp_path / "kernels" / "matmul.py").read_text()


def test_init_into_a_new_directory(tmp_path, gpuemu_bin):
    proc = gpuemu(gpuemu_bin, tmp_path, "init", "new project", "--template", "attention", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["template"] == "attention" and "gpuemu.toml" in doc["files"]
    assert 'name = "new-project"' in (tmp_path / "new project" / "gpuemu.toml").read_text()
