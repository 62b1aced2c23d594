"""docs/frameworks.md's worked examples run as written, one per framework: each section's gpuemu.toml and
every Python block headed by its file name (`# kernels/gelu.py`) are extracted into a scratch project
and gated with the real `gpuemu ci run` and the real framework (torch, Triton, JAX/Pallas, TensorFlow).
The numpy and TensorFlow kernels pass; the PyTorch, Triton and Pallas ones are the buggy twins of
examples/torch, examples/triton and examples/pallas (checked verbatim here) and fail on their numbers.
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


# section -> (modules it needs, example folder its files are copied from, {dtype: passes?})
SECTIONS = {
    "numpy": (["numpy"], None, None),
    "TensorFlow": (["tensorflow"], None, None),
    "PyTorch": (["torch"], "torch", {"float32": True, "float16": False}),
    "Triton": (["torch", "triton"], "triton", {"float32": False, "float16": False}),
    "JAX and Pallas": (["jax"], "pallas", {"float32": False, "float16": False, "bfloat16": False}),
}
FRAMEWORK = {"numpy": "numpy", "TensorFlow": "tensorflow", "PyTorch": "pytorch", "Triton": "pytorch",
             "JAX and Pallas": "jax"}


def require(modules) -> None:
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:  # test dependencies: never skipped
        pytest.fail(f"{', '.join(missing)} not installed: run scripts/install-deps.sh")


@pytest.mark.parametrize("title", list(SECTIONS))
def test_worked_example_runs_with_its_verdict(project, title):
    modules, _, verdicts = SECTIONS[title]
    require(modules)
    write_example(project.root, title)
    # Few cases: importing the framework (in the load check, then in the op's worker) is most of it.
    proc = project.run("ci", "run", "--iterations", "2", "--seed", "1", "--out", "out", timeout=900)
    result = json.loads((project.root / "out" / "result.json").read_text())
    for op in result["ops"]:
        assert op["runtime"]["framework"] == FRAMEWORK[title], op["runtime"]
    if verdicts is None:
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        for op in result["ops"]:
            assert op["failed"] == 0 and op["passed"] == op["total"] > 0, op.get("failures", [])[:1]
        return
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    (op,) = result["ops"]
    assert op["errors"] == 0, op["failures"][:1]
    failed = {f["dtype"] for f in op["failures"]}
    assert all(f["kind"] in ("mismatch", "unexpected_nonfinite") and f["replay"].startswith("gpuemu reproduce ") for f in op["failures"]), \
        op["failures"][:1]
    assert {d: d not in failed for d in verdicts} == verdicts, (failed, op["failures"][:1])


@pytest.mark.parametrize("title", [t for t, (_, folder, _) in SECTIONS.items() if folder])
def test_excerpts_of_example_projects_are_verbatim(title):
    folder = REPO / "examples" / SECTIONS[title][1]
    blocks = re.findall(r"```python\n# (\S+\.py)\n(.*?)```", section(title), re.S)
    assert len(blocks) >= 2, title
    for path, code in blocks:
        assert (folder / path).read_text() == code, f"docs/frameworks.md, {title}: {path} differs from {folder / path}"
