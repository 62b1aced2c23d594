# A launcher shim for python3 (pyenv, asdf, a wrapper script) is called once per run, not once per
# process: by the fork server, or asked which interpreter it starts (issue 32): shims that log calls.
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from e2e_support import one_op_toml

# The interpreter binary running these tests (after symlinks: never a shim).
REAL = pathlib.Path(sys.executable).resolve()

OPS = """
import os, pathlib, sys
# Each process that loads this (the load check, then each worker) says which interpreter runs it and
# the first folder on its PATH.
with open(os.environ["SEEN_LOG"], "a") as seen:
    seen.write(f"{sys.executable}|{os.environ['PATH'].split(os.pathsep)[0]}\\n")

def double(inputs):
    return inputs["x"] * 2

def double_ref(inputs):
    return inputs["x"].astype("float64") * 2

def negate(inputs):
    return -inputs["x"]

def negate_ref(inputs):
    return -inputs["x"].astype("float64")
"""

TOML = """
[project]
name = "launcher"

[validation]
dtypes = ["float32"]
seed = 7
timeout = 60
{python}

[[ops]]
name = "double"
op_script = "ops:double"
reference = "ops:double_ref"
[ops.schema]
dims = { M = [1, 4], N = [1, 16] }
inputs = { x = ["M", "N"] }

[[ops]]
name = "negate"
op_script = "ops:negate"
reference = "ops:negate_ref"
[ops.schema]
dims = { M = [1, 4], N = [1, 16] }
inputs = { x = ["M", "N"] }
"""


def write_shim(path: pathlib.Path, body: str) -> pathlib.Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def write_project(project, python_line: str = "") -> None:
    (project.root / "ops.py").write_text(OPS)
    (project.root / "gpuemu.toml").write_text(TOML.replace("{python}", python_line))


def calls(log: pathlib.Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def run_fuzz(project, env: dict):
    proc = project.run("fuzz", "--iterations", "3", env=env)
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture
def passthrough(tmp_path):
    """A wrapper script named python3 that logs each call and runs the real interpreter."""
    log = tmp_path / "shim.log"
    shim = write_shim(tmp_path / "shim-bin" / "python3", f'echo "$*" >> "{log}"\nexec "{REAL}" "$@"\n')
    return shim, log


def test_a_shim_on_path_is_called_once_per_run(project, passthrough):
    shim, log = passthrough
    write_project(project)
    seen = project.root / "seen.log"
    env = {"PATH": f"{shim.parent}{os.pathsep}{os.environ['PATH']}", "SEEN_LOG": str(seen), "GPUEMU_PYTHON": ""}
    # Two ops: the load check and four workers, forks of the fork server, which the shim started.
    run_fuzz(project, env)
    assert calls(log) == ["-m gpuemu.fork_server"], calls(log)
    loads = calls(seen)
    assert len(loads) >= 5 and all(line.split("|")[0] == str(REAL) for line in loads), loads
    # Without the fork server every worker is an interpreter of its own: the shim is asked once.
    log.unlink()
    seen.unlink()
    run_fuzz(project, {**env, "GPUEMU_FORK_SERVER": "0"})
    assert len(calls(log)) == 1 and calls(log)[0].startswith("-S -c "), calls(log)
    assert {line.split("|")[0] for line in calls(seen)} == {str(REAL)}
    # The yardstick: with resolution turned off each of those starts goes through the shim.
    log.unlink()
    run_fuzz(project, {**env, "GPUEMU_FORK_SERVER": "0", "GPUEMU_RESOLVE_PYTHON": "0"})
    assert len(calls(log)) >= 5, calls(log)


def test_cold_scripts_start_the_interpreter_not_the_shim(project, passthrough):
    # A script that is not persistent is a new interpreter per case, op and reference each.
    shim, log = passthrough
    project.write(one_op_toml("op_identity.py"), ["op_identity.py", "ref_identity.py"])
    proc = project.run("fuzz", "--iterations", "4", env={"GPUEMU_PYTHON": str(shim)})
    assert proc.returncode == 0, proc.stderr
    assert len(calls(log)) == 1 and calls(log)[0].startswith("-S -c "), calls(log)
    log.unlink()
    proc = project.run("fuzz", "--iterations", "4", env={"GPUEMU_PYTHON": str(shim), "GPUEMU_RESOLVE_PYTHON": "0"})
    assert proc.returncode == 0, proc.stderr
    assert len(calls(log)) >= 8, calls(log)


def test_gpuemu_python_naming_a_shim_is_resolved_once(project, passthrough):
    shim, log = passthrough
    write_project(project, 'python = "python-not-used"')
    seen = project.root / "seen.log"
    run_fuzz(project, {"GPUEMU_PYTHON": str(shim), "SEEN_LOG": str(seen)})
    assert len(calls(log)) == 1, calls(log)
    assert len(calls(seen)) >= 5


def test_an_interpreter_binary_is_not_started_to_resolve_it(project, tmp_path):
    # A venv's python is a symlink to the interpreter: used as written, nothing probed.
    link = tmp_path / "venv-bin" / "python3"
    link.parent.mkdir()
    link.symlink_to(REAL)
    write_project(project)
    seen = project.root / "seen.log"
    run_fuzz(project, {"GPUEMU_PYTHON": str(link), "SEEN_LOG": str(seen)})
    assert {line.split("|")[0] for line in calls(seen)} == {str(link)}


def test_a_version_manager_shim_honours_the_project_python_version(project, tmp_path):
    """A shim that is not pyenv: it picks versions/<.python-version>/bin/python3 in the folder it is
    started in and puts that bin folder first on PATH, as pyenv exec does."""
    versions = tmp_path / "versions"
    for version in ("v1", "v2"):
        (versions / version / "bin").mkdir(parents=True)
        (versions / version / "bin" / "python3").symlink_to(REAL)
    log = tmp_path / "shim.log"
    shim = write_shim(tmp_path / "shim-bin" / "python3",
                      f'echo "$PWD $*" >> "{log}"\n'
                      f'v=$(cat .python-version 2>/dev/null || echo v1)\n'
                      f'PATH="{versions}/$v/bin:$PATH" exec "{versions}/$v/bin/python3" "$@"\n')
    write_project(project)
    seen = project.root / "seen.log"
    env = {"GPUEMU_PYTHON": str(shim), "SEEN_LOG": str(seen)}
    for version in ("v2", "v1"):
        (project.root / ".python-version").write_text(version + "\n")
        bin_dir = versions / version / "bin"
        for fork_server in ("1", "0"):
            seen.unlink(missing_ok=True)
            log.unlink(missing_ok=True)
            run_fuzz(project, {**env, "GPUEMU_FORK_SERVER": fork_server})
            # Called once, in the project (where its .python-version is).
            assert len(calls(log)) == 1 and calls(log)[0].startswith(f"{project.root} "), calls(log)
            loads = calls(seen)
            assert len(loads) >= 5 and {line.split("|")[0] for line in loads} == {str(bin_dir / "python3")}, loads
            if fork_server == "0":  # started by gpuemu: with the launcher's PATH, as it would set it
                assert {line.split("|")[1] for line in loads} == {str(bin_dir)}, loads


def test_real_pyenv_shim_runs_the_project_version(project):
    """pyenv itself: the interpreter gpuemu starts is `pyenv which python3` in the project, and
    another .python-version there changes it (that version has no numpy here, so its load check
    fails naming it)."""
    root = pathlib.Path(os.environ.get("PYENV_ROOT", pathlib.Path.home() / ".pyenv"))
    shim = root / "shims" / "python3"
    pyenv = shutil.which("pyenv") or str(root / "bin" / "pyenv")
    if not shim.exists() or not os.access(pyenv, os.X_OK):
        pytest.skip("no pyenv here")
    # As a shell has it: `pyenv exec` (which may have started these tests) exports PYENV_VERSION,
    # which would make pyenv ignore the project's .python-version.
    env = {k: v for k, v in os.environ.items() if k not in ("PYENV_VERSION", "PYENV_DIR")}
    versions = subprocess.run([pyenv, "versions", "--bare"], capture_output=True, text=True, env=env).stdout.split()
    ours = next((v for v in versions if pathlib.Path(root / "versions" / v).resolve() == REAL.parent.parent.resolve()),
                None)
    other = next((v for v in versions if v != ours and (root / "versions" / v / "bin" / "python3").exists()), None)
    if ours is None or other is None:
        pytest.skip("pyenv has no second version beside the one running these tests")
    write_project(project)
    seen = project.root / "seen.log"
    for version in (ours, other):
        (project.root / ".python-version").write_text(version + "\n")
        expected = subprocess.run([pyenv, "which", "python3"], cwd=project.root, capture_output=True, text=True,
                                  env=env).stdout.strip()
        assert expected.startswith(str(root / "versions" / version)), expected
        # The other version without the fork server, so that a failure names the interpreter.
        run_env = {"GPUEMU_PYTHON": str(shim), "SEEN_LOG": str(seen), "PYENV_VERSION": "", "PYENV_DIR": "",
                   "GPUEMU_FORK_SERVER": "1" if version == ours else "0"}
        proc = project.run("fuzz", "--iterations", "1", env=run_env)
        if version == ours:
            assert proc.returncode == 0, proc.stderr
            assert {line.split("|")[0] for line in calls(seen)} == {expected}
        elif proc.returncode != 0:  # no numpy (or gpuemu) for that version: the message names it
            assert expected in proc.stderr, proc.stderr
        else:
            assert calls(seen)[-1].split("|")[0] == expected
