"""The Action's release workflow (.github/workflows/action-image.yml): its tag check runs as the
runner runs it (bash -eo pipefail) in a real git repository with real tags, so a release whose
action.yml pins another image, a malformed tag, or an older v1.x.y that must not move v1 is caught.
"""
import os
import pathlib
import re
import subprocess

import pytest
import yaml

from action_support import action
from e2e_support import REPO

WORKFLOW = REPO / ".github" / "workflows" / "action-image.yml"
CHECK_STEP = "Check the tag and the image action.yml pins"


def workflow():
    return yaml.safe_load(WORKFLOW.read_text())


def steps():
    return workflow()["jobs"]["image"]["steps"]


def check_script():
    [step] = [s for s in steps() if s.get("name") == CHECK_STEP]
    return step["run"]


def git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"})


def release_commit(repo, version):
    """A commit whose action.yml is the real one pinned to IMAGE:version, tagged version."""
    text = re.sub(r"(image: docker://[^:\s]+):\S+", rf"\1:{version}", (REPO / "action.yml").read_text())
    (repo / "action.yml").write_text(text)
    git(repo, "add", "action.yml")
    git(repo, "commit", "-q", "-m", f"release {version}")
    git(repo, "tag", version)


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "action"
    root.mkdir()
    git(root, "init", "-q")
    return root


def run_check(repo, tag, tmp_path):
    output = tmp_path / "github_output"
    output.write_text("")
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", check_script()], cwd=repo,
                          env={**os.environ, "TAG": tag, "GITHUB_OUTPUT": str(output)},
                          capture_output=True, text=True, timeout=60)
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
    return proc, outputs


def test_the_newest_release_pushes_its_tag_and_moves_v1(repo, tmp_path):
    release_commit(repo, "v1.9.0")
    release_commit(repo, "v1.10.0")  # sorted as versions, not as text
    proc, outputs = run_check(repo, "v1.10.0", tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert outputs == {"image": "ghcr.io/skelf/gpuemu-action", "newest": "true"}


def test_an_older_release_leaves_v1_where_it_is(repo, tmp_path):
    release_commit(repo, "v1.2.1")
    release_commit(repo, "v1.3.0")
    git(repo, "checkout", "-q", "v1.2.1")  # a backported fix tagged after v1.3.0
    proc, outputs = run_check(repo, "v1.2.1", tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert outputs["newest"] == "false"
    assert "v1.3.0 is" in proc.stdout


def test_a_tag_that_action_yml_does_not_pin_fails(repo, tmp_path):
    release_commit(repo, "v1.4.0")
    git(repo, "tag", "v1.4.1")  # tagged without bumping action.yml's image
    proc, outputs = run_check(repo, "v1.4.1", tmp_path)
    assert proc.returncode == 1
    assert ("::error file=action.yml::action.yml runs ghcr.io/skelf/gpuemu-action:v1.4.0, not "
            "ghcr.io/skelf/gpuemu-action:v1.4.1; set runs.image to docker://ghcr.io/skelf/gpuemu-action:v1.4.1") \
        in proc.stdout
    assert outputs == {}


@pytest.mark.parametrize("tag", ["v1.4", "v1.04.0", "v2.0.0", "v1.4.0-rc1"])
def test_a_tag_that_is_not_a_v1_version_fails(repo, tmp_path, tag):
    release_commit(repo, "v1.4.0")
    proc, _ = run_check(repo, tag, tmp_path)
    assert proc.returncode == 1
    assert f"tag '{tag}' is not a version v1.MINOR.PATCH" in proc.stdout


def test_it_runs_on_version_tags_and_pushes_the_image_action_yml_names():
    flow = workflow()
    triggers = flow[True] if True in flow else flow["on"]  # YAML 1.1 reads a bare `on` as true
    assert triggers == {"push": {"tags": ["v1.*.*"]}}
    [build] = [s for s in steps() if s.get("uses", "").startswith("docker/build-push-action@")]
    assert build["with"]["file"] == "Dockerfile" and build["with"]["push"] is True
    assert build["with"]["tags"] == "${{ steps.meta.outputs.image }}:${{ github.ref_name }}"
    assert flow["jobs"]["image"]["permissions"] == {"contents": "write", "packages": "write"}
    assert action()["runs"]["image"].startswith("docker://ghcr.io/skelf/gpuemu-action:")
