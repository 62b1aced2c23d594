"""End-to-end tests of `gpuemu lint` and `gpuemu artifacts` with the real binary and the committed
PTX under tests/kernels (docs/lint.md). The CUDA tools are hidden (GPUEMU_PTXAS=none, ...) in the
tests that pin PTX-only numbers, so they hold on machines with and without the pip wheels."""
import json
import pathlib
import re
import shutil

import pytest

KERNELS = pathlib.Path(__file__).resolve().parents[2] / "tests" / "kernels"
NO_TOOLS = {"GPUEMU_PTXAS": "none", "GPUEMU_NVCC": "none", "GPUEMU_CUOBJDUMP": "none", "GPUEMU_NVDISASM": "none"}


def kernels_project(project, checks_saxpy="", checks_local="", policies=""):
    kdir = project.root / "kernels"
    kdir.mkdir(exist_ok=True)
    for name in ("saxpy.ptx", "saxpy_local.ptx", "reduce_loop.ptx", "reduce_unrolled.ptx"):
        shutil.copy(KERNELS / name, kdir / name)
    project.write(f"""
[project]
name = "lint-e2e"

[[kernels]]
name = "saxpy"
source = "kernels/saxpy.ptx"

[kernels.artifact_checks]
{checks_saxpy}

[[kernels]]
name = "saxpy_local"
source = "kernels/saxpy_local.ptx"

[kernels.artifact_checks]
max_registers = 255
{checks_local}

[[kernels]]
name = "reduce_rows"
source = "kernels/reduce_loop.ptx"

{policies}
""")
    return project


def test_config_kernels_json_shape_and_violations(project):
    kernels_project(project, checks_local='forbidden_instructions = ["ld.local"]')
    proc = project.run("lint", "--format", "json", env=NO_TOOLS, check_json=True)
    assert proc.returncode == 1, proc.stderr
    doc = proc.json
    assert doc["passed"] is False
    assert doc["tools"]["ptxas"] is None
    by_name = {k["name"]: k for k in doc["kernels"]}
    assert list(by_name) == ["saxpy", "saxpy_local", "reduce_rows"]
    saxpy = by_name["saxpy"]
    assert saxpy["passed"] is True and saxpy["violations"] == []
    assert saxpy["source"] == "kernels/saxpy.ptx"
    assert saxpy["metrics"]["instructions"] == {"value": 20, "from": "ptx"}
    assert saxpy["metrics"]["ld.global"]["value"] == 2
    local = by_name["saxpy_local"]
    assert local["passed"] is False
    checks = [v["check"] for v in local["violations"]]
    assert checks == ["max_local_memory_bytes", "forbidden_instructions"]
    first = local["violations"][0]
    assert (first["limit"], first["actual"], first["from"]) == (0, 1024, "ptx")
    assert local["violations"][1]["file"].endswith("saxpy_local.cu") or local["violations"][1]["file"].endswith(".ptx")
    assert any("spills are known only from ptxas" in n for n in local["notes"])


def test_file_mode_needs_no_config(tmp_path, gpuemu_bin):
    import subprocess

    def run(*args):
        return subprocess.run([str(gpuemu_bin), "lint", *args], cwd=tmp_path, capture_output=True, text=True,
                              env={**NO_TOOLS, "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}, timeout=120)

    ok = run(str(KERNELS / "saxpy.ptx"), str(KERNELS / "reduce_unrolled.ptx"), "--format", "json")
    assert ok.returncode == 0, ok.stderr
    doc = json.loads(ok.stdout)
    assert [k["entry"] for k in doc["kernels"]] == ["saxpy", "reduce_rows"]
    assert doc["kernels"][1]["metrics"]["ld.global"]["value"] == 8

    # The text output of file mode, a failing file, a missing one, PTX that does not parse and a .cu
    # without nvcc are CLI cases: tests/cli/cases/lint_file_*.case, lint_cu_without_nvcc.case.


def test_artifacts_baseline_store_and_diff(project):
    policies = "[policies.artifact_thresholds]\ninstructions = 1.5\n"
    kernels_project(project, policies=policies)
    stored = project.run("artifacts", "baseline", "store", "main", "--format", "json", env=NO_TOOLS, check_json=True)
    assert stored.returncode == 0, stored.stderr
    assert stored.json["kernels"] == ["saxpy", "saxpy_local", "reduce_rows"]

    same = project.run("artifacts", "diff", "main", env=NO_TOOLS)
    assert same.returncode == 0, same.stderr
    assert "0 regression(s) against 'main'" in same.stdout
    # Nothing changed: no kernel claims a change, and no "N -> N" line (watched metrics stay in JSON).
    assert "OK   saxpy: 0 metric(s) changed" in same.stdout, same.stdout
    assert not re.search(r"(\d+) -> \1\b", same.stdout), same.stdout

    # The reduce_rows kernel is now the unrolled one: more instructions than 1.5x the baseline.
    toml = (project.root / "gpuemu.toml").read_text().replace("reduce_loop.ptx", "reduce_unrolled.ptx")
    (project.root / "gpuemu.toml").write_text(toml)
    diff = project.run("artifacts", "diff", "main", "--format", "json", env=NO_TOOLS, check_json=True)
    assert diff.returncode == 1, diff.stderr
    reduce = next(k for k in diff.json["kernels"] if k["name"] == "reduce_rows")
    assert reduce["regressed"] is True
    loads = next(m for m in reduce["metrics"] if m["metric"] == "ld.global")
    assert (loads["baseline"], loads["current"], loads["delta"], loads["regressed"]) == (1, 8, 7, False)
    assert diff.json["regressions"] == 1

    missing = project.run("artifacts", "diff", "nope", env=NO_TOOLS)
    assert missing.returncode == 0
    assert "no artifact baseline 'nope'" in missing.stderr


def find_tool(name):
    """The tool on PATH or in this Python's pip wheels (the project fixture moves HOME, hiding user site-packages)."""
    import glob
    import site
    found = shutil.which(name)
    if found:
        return found
    for sp in site.getsitepackages() + [site.getusersitepackages()]:
        hits = sorted(glob.glob(f"{sp}/nvidia/*/bin/{name}"))
        if hits:
            return hits[0]
    return None


def test_real_ptxas_numbers_when_installed(project):
    ptxas = find_tool("ptxas")
    if ptxas is None:
        pytest.skip("ptxas not found; install it with 'python3 -m pip install nvidia-cuda-nvcc'")
    kernels_project(project)
    proc = project.run("lint", "--format", "json", env={"GPUEMU_PTXAS": ptxas}, check_json=True)
    assert proc.json["tools"]["ptxas"] == ptxas
    local = next(k for k in proc.json["kernels"] if k["name"] == "saxpy_local")
    assert local["metrics"]["local_memory_bytes"] == {
        "value": 1024, "from": "ptxas", "note": "stack frame (local arrays and spills)"}
    assert local["metrics"]["registers"]["from"] == "ptxas"
    assert local["metrics"]["spills"]["value"] == 0
