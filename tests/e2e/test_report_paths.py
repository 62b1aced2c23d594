"""Paths in reports are relative to the workspace, not to gpuemu.toml's folder (docs/ci.md, "Paths in
reports"): with the config in a subfolder, every annotation file=, SARIF artifactLocation.uri and JUnit
file names a file that exists under the workspace, in `ci run` on a runner and in `report render`.
"""
import json
import os
import pathlib
import re
import shutil
import subprocess
import urllib.parse
import xml.etree.ElementTree as ET

from e2e_support import one_op_toml

SCRIPTS = pathlib.Path(__file__).resolve().parent / "scripts"


def run(binary, args, cwd, env):
    return subprocess.run([str(binary), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def sarif_paths(log: dict, workspace: pathlib.Path) -> list:
    run_ = log["runs"][0]
    assert run_["originalUriBaseIds"]["%SRCROOT%"]["uri"] == workspace.as_uri() + "/"
    paths = []
    for result in run_["results"]:
        for location in result.get("locations", []):
            artifact = location["physicalLocation"]["artifactLocation"]
            assert artifact["uriBaseId"] == "%SRCROOT%"
            paths.append(urllib.parse.unquote(artifact["uri"]))
    return paths


def test_every_report_path_exists_under_the_workspace_with_the_config_in_a_subfolder(tmp_path, gpuemu_bin):
    workspace = (tmp_path / "ws").resolve()
    sub = workspace / "sub"
    sub.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    # One op with its source written (relative to gpuemu.toml), one with it inferred.
    toml = one_op_toml("op_off_by_tail.py", extra='source = "op_off_by_tail.py:7"', validation="test_cases = 2")
    toml += toml[toml.index("[[ops]]"):].replace('name = "op"', 'name = "op_inferred"').replace(
        'source = "op_off_by_tail.py:7"', "")
    (sub / "gpuemu.toml").write_text(toml)
    for script in ("_proto.py", "op_off_by_tail.py", "ref_identity.py"):
        shutil.copy(SCRIPTS / script, sub / script)
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    base_env.update(GPUEMU_HOME=str(tmp_path / "home"), HOME=str(tmp_path))
    env = dict(base_env, GITHUB_ACTIONS="true", GITHUB_WORKSPACE=str(workspace),
               GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"), GITHUB_OUTPUT=str(tmp_path / "output.txt"))

    proc = run(gpuemu_bin, ["--config", "sub/gpuemu.toml", "ci", "run", "--iterations", "8", "--seed", "2",
                            "--out", "out"], workspace, env)
    assert proc.returncode == 1, proc.stderr
    annotated = re.findall(r"^::error [^:]*\bfile=([^,:]+)", proc.stdout, re.M)
    assert "sub/op_off_by_tail.py" in annotated, proc.stdout
    sarif = sarif_paths(json.loads((workspace / "out" / "gpuemu.sarif").read_text()), workspace)
    junit = [case.get("file") for case in ET.parse(workspace / "out" / "junit.xml").iter("testcase")
             if case.get("file")]
    for name, paths in (("annotations", annotated), ("SARIF", sarif), ("JUnit", junit)):
        assert paths, f"{name}: no paths"
        for path in paths:
            assert not path.startswith("/") and (workspace / path).is_file(), f"{name}: {path} is not in the workspace"

    # Offline, from the config's folder, without GitHub's variables: the git root is the workspace.
    render = run(gpuemu_bin, ["report", "render", "../out/result.json", "--format", "sarif"], sub, base_env)
    assert render.returncode == 0, render.stderr
    rendered = sarif_paths(json.loads(render.stdout), workspace)
    assert sorted(rendered) == sorted(sarif) and "sub/op_off_by_tail.py" in rendered
