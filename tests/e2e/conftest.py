"""Fixtures for the end-to-end suites: the real gpuemu binary and throwaway projects.

The binary comes from $GPUEMU_BIN (scripts/test.sh sets it to the sanitizer build), else build/gpuemu.
"""
import json
import os
import pathlib
import shutil
import subprocess

import pytest

from e2e_support import REPO, one_op_toml  # noqa: F401  (re-exported for fixtures)

SCRIPTS = pathlib.Path(__file__).resolve().parent / "scripts"

# The binary finds its Python package next to itself; a GPUEMU_BIN from another checkout would run
# that checkout's gpuemu package, not this one's. This tree's package is the one under test.
os.environ.setdefault("GPUEMU_PACKAGE_DIR", str(REPO / "python"))


def pytest_addoption(parser):
    # test_cli_cases.py: rewrite each tests/cli/cases/*.case to what the binary does now, as lit's
    # --update-tests and sqllogictest's --rewrite-results do (tests/cli/README.md).
    parser.addoption("--update", action="store_true", default=False,
                     help="rewrite tests/cli/cases/*.case expectations to the binary's current output")


def binary_path() -> pathlib.Path:
    env = os.environ.get("GPUEMU_BIN")
    return pathlib.Path(env) if env else REPO / "build" / "gpuemu"


@pytest.fixture(scope="session")
def gpuemu_bin() -> pathlib.Path:
    path = binary_path()
    if not path.exists():
        pytest.fail(f"gpuemu binary not found at {path}: build it (scripts/setup.sh) or set GPUEMU_BIN")
    return path


class Project:
    """A temporary gpuemu project: a gpuemu.toml plus copies of scripts from tests/e2e/scripts."""

    def __init__(self, root: pathlib.Path, binary: pathlib.Path):
        self.root = root
        self.binary = binary
        self.home = root / ".gpuemu-home"

    def write(self, toml: str, scripts=()):
        for name in ("_proto.py", *scripts):
            shutil.copy(SCRIPTS / name, self.root / name)
        (self.root / "gpuemu.toml").write_text(toml)
        return self

    def run(self, *args, env=None, timeout=300, check_json=False):
        full_env = dict(os.environ)
        full_env["GPUEMU_HOME"] = str(self.home)
        full_env["HOME"] = str(self.root)  # no user config from the developer's machine
        full_env.update(env or {})
        proc = subprocess.run([str(self.binary), *args], cwd=self.root, env=full_env, capture_output=True,
                              text=True, timeout=timeout)
        if check_json:
            proc.json = json.loads(proc.stdout)
        return proc


@pytest.fixture
def project(tmp_path, gpuemu_bin) -> Project:
    return Project(tmp_path, gpuemu_bin)
