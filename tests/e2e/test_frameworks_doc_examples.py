"""docs/frameworks.md's self-contained worked examples run as written: the numpy and TensorFlow
sections' gpuemu.toml and every Python block headed by its file name (`# kernels/gelu.py`) are
extracted into a scratch project and gated with the real `gpuemu ci run` (TensorFlow for real).
The PyTorch, Triton and Pallas sections are excerpts of examples/torch, examples/triton and
examples/pallas, which test_framework_examples.py runs.
"""
from __future__ import annotations

import importlib.util
import json
import re

import pytest

from e2e_support import REPO

DOC = REPO / "docs" / "frameworks.md"


def section(title: str) -> str:
    text = DOC.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else len(text)]


def write_example(root, title: str) -> None:
    """The section's first toml block as gpuemu.toml, each named Python block as its file."""
    body = section(title)
    blocks = re.findall(r"```(toml|python)\n(.*?)```", body, re.S)
    tomls = [code for lang, code in blocks if lang == "toml"]
    assert tomls, f"docs/frameworks.md, {title}: no toml block"
    (root / "gpuemu.toml").write_text(tomls[0])
    named = 0
    for lang, code in blocks:
        first = code.splitlines()[0]
        m = re.match(r"# (\S+\.py)\b", first)
        if lang == "python" and m and "abridged" not in first:
            path = root / m.group(1)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(code)
            named += 1
    assert named >= 2, f"docs/frameworks.md, {title}: the kernel and its reference must both be shown"


@pytest.mark.parametrize("title", ["numpy", "TensorFlow"])
def test_worked_example_passes_ci_run(project, title):
    framework = {"numpy": "numpy", "TensorFlow": "tensorflow"}[title]
    if importlib.util.find_spec(framework) is None:  # a test dependency: never skipped
        pytest.fail(f"{framework} is not installed: run scripts/install-deps.sh")
    write_example(project.root, title)
    # Few cases: importing TensorFlow (in the load check, then in the op's worker) is most of it.
    proc = project.run("ci", "run", "--iterations", "2", "--seed", "1", "--out", "out", timeout=600)
    result = json.loads((project.root / "out" / "result.json").read_text())
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for op in result["ops"]:
        assert op["failed"] == 0 and op["passed"] == op["total"] > 0, op.get("failures", [])[:1]
        assert op["runtime"]["framework"] == framework, op["runtime"]
