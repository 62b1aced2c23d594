# Shared pytest fixtures for the gpuemu Python suite (keep small: one fixture per shared need).
# Paths here point at repository files both language suites use.
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

# @triton.jit reads TRITON_INTERPRET when a kernel (Triton's own library included) is defined, so the
# tests that run kernels in this process (test_triton_compat, _libdevice, _sanitizer) need it set before
# ANY module of the process imports triton: under pytest-xdist another test module may import it first.
# gpuemu itself sets the variable explicitly ("1" or "0") in every worker it starts, so this never
# decides what a worker runs.
os.environ["TRITON_INTERPRET"] = "1"

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def vectors_dir() -> Path:
    """tests/vectors/ at the repository root (shared with the C++ suite)."""
    return REPO_ROOT / "tests" / "vectors"


def binary_candidates() -> list[Path]:
    env = os.environ.get("GPUEMU_BIN")
    if env:
        return [Path(env)]
    return [REPO_ROOT / "build" / "gpuemu", REPO_ROOT / "build-run" / "gpuemu"]


@pytest.fixture(scope="session")
def gpuemu_bin() -> Path:
    """The gpuemu binary under test: $GPUEMU_BIN, else build/gpuemu or build-run/gpuemu."""
    for path in binary_candidates():
        if path.exists():
            return path
    pytest.fail(f"gpuemu binary not found at {', '.join(map(str, binary_candidates()))}: build it or set GPUEMU_BIN")


# Ops of the bundled examples whose op runs in the client (client_side mode): the tests run numpy
# softmaxes, correct and buggy, against the examples' float64 reference. softmax_client_module also
# names a module (the examples' correct kernel), which a client's run_op must still take over.
CLIENT_SIDE_OP = """

[[ops]]
name = "softmax_client"
persistent = true
reference = "refs/softmax_ref.py"
execution_mode = "client_side"

[ops.schema]
dims = { M = [1, 40], N = [1, 300] }
inputs = { x = ["M", "N"] }
output = ["M", "N"]

[ops.inputs.x]
domain = [-30.0, 30.0]

[ops.tolerances]
float32 = { atol = 1e-6, rtol = 1e-5 }
float16 = { atol = 1e-5, rtol = 2e-3 }
bfloat16 = { atol = 1e-5, rtol = 1e-2 }

[[ops]]
name = "softmax_client_module"
persistent = true
module = "kernels.softmax:softmax"
reference = "refs/softmax_ref.py"
execution_mode = "client_side"

[ops.schema]
dims = { M = [1, 40], N = [1, 300] }
inputs = { x = ["M", "N"] }
output = ["M", "N"]

[ops.inputs.x]
domain = [-30.0, 30.0]

[ops.tolerances]
float32 = { atol = 1e-6, rtol = 1e-5 }
"""


class RunningDaemon:
    """A daemon started from the binary under test, with its own GPUEMU_HOME, serving one project."""

    def __init__(self, binary: Path, project: Path, home: Path):
        self.binary = binary
        self.project = project
        self.home = home
        self.socket = home / "gpuemu.sock"
        self.env = {**os.environ, "GPUEMU_HOME": str(home), "HOME": str(home.parent)}

    def cli(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.binary), *args], cwd=self.project, env=self.env, capture_output=True,
                              text=True, timeout=timeout)

    def start(self) -> None:
        proc = self.cli("daemon", "start", "--background", timeout=60)
        assert proc.returncode == 0, f"gpuemu daemon start failed ({proc.returncode}): {proc.stderr}"
        deadline = time.monotonic() + 30
        while not self.socket.exists():
            assert time.monotonic() < deadline, f"the daemon made no socket at {self.socket}: {self.cli('daemon', 'logs').stdout}"
            time.sleep(0.05)

    def stop(self) -> None:
        self.cli("daemon", "stop", timeout=60)


def examples_daemon(gpuemu_bin: Path, root: Path, env: dict[str, str] | None = None) -> RunningDaemon:
    """A started daemon serving a copy of examples/ (plus softmax_client) under root; env adds to its environment."""
    project = root / "examples"
    shutil.copytree(REPO_ROOT / "examples", project)
    with open(project / "gpuemu.toml", "a") as toml:
        toml.write(CLIENT_SIDE_OP)
    running = RunningDaemon(gpuemu_bin, project, root / "home")
    running.env.update(env or {})
    running.start()
    return running


@pytest.fixture(scope="session")
def start_examples_daemon(gpuemu_bin):
    """examples_daemon(root, env) for modules that need a daemon of their own (test files cannot
    import conftest: tests/e2e has one of the same name)."""
    return lambda root, env=None: examples_daemon(gpuemu_bin, root, env)


@pytest.fixture(scope="module")
def daemon(gpuemu_bin, tmp_path_factory):
    """A copy of examples/ (plus softmax_client) served by a real daemon, stopped afterwards."""
    running = examples_daemon(gpuemu_bin, tmp_path_factory.mktemp("daemon"))
    yield running
    running.stop()
