# Shared pytest fixtures for the gpuemu Python suite (keep small: one fixture per shared need).
# Paths here point at repository files both language suites use.
import os
from pathlib import Path

import pytest

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
