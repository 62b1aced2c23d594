# Shared pytest fixtures for the gpuemu Python suite (keep small: one fixture per shared need).
# Paths here point at repository files both language suites use.
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def vectors_dir() -> Path:
    """tests/vectors/ at the repository root (shared with the C++ suite)."""
    return REPO_ROOT / "tests" / "vectors"
