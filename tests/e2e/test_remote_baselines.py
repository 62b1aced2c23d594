"""End-to-end: `gpuemu baseline push|pull` against real servers on 127.0.0.1 (docs/baselines.md).

nginx with WebDAV, moto's S3 server (signature checking on) and the Python test servers under
tests/servers/ are started per test and always stopped. The home-made S3 server's own signer is
checked against AWS's published vectors and botocore.
"""
import getpass
import grp
import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SERVERS = REPO / "tests" / "servers"
TOKEN = "tok-e2e-5f4e3d2c1b"
DOCUMENT = '{"schema_version": 1, "kind": "gpuemu-baseline", "tag": "main", "entries": []}\n'


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, seconds=10) -> bool:
    deadline = time.time() + seconds
    while time.time() < deadline and proc.poll() is None:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.05)
    return False


def stop(proc: subprocess.Popen):
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture
def nginx(tmp_path):
    prefix = tmp_path / "nginx"
    (prefix / "dav").mkdir(parents=True)
    template = (SERVERS / "nginx.conf.in").read_text()
    for _ in range(5):
        port = free_port()
        conf = (template.replace("@PREFIX@", str(prefix)).replace("@PORT@", str(port)).replace("@TOKEN@", TOKEN)
                .replace("@USER@", getpass.getuser()).replace("@GROUP@", grp.getgrgid(os.getgid()).gr_name))
        (prefix / "nginx.conf").write_text(conf)
        proc = subprocess.Popen(["nginx", "-c", str(prefix / "nginx.conf"), "-p", str(prefix), "-g", "daemon off;"],
                                start_new_session=True, stderr=subprocess.DEVNULL)
        if wait_for_port(port, proc):
            try:
                yield f"http://127.0.0.1:{port}", prefix / "dav"
            finally:
                stop(proc)
            return
        stop(proc)
    pytest.fail("nginx did not start; see " + str(prefix / "error.log"))


@pytest.fixture
def python_server():
    procs = []

    def start(script, *args):
        proc = subprocess.Popen([sys.executable, str(SERVERS / script), *args], stdout=subprocess.PIPE, text=True,
                                start_new_session=True)
        procs.append(proc)
        return json.loads(proc.stdout.readline())

    yield start
    for proc in procs:
        stop(proc)


def ci_free_env(**extra):
    """The environment without GitHub Actions variables, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AWS_", "GPUEMU_"))}
    env.update(extra)
    return env


def test_s3_server_self_test_pins_aws_vectors():
    proc = subprocess.run([sys.executable, str(SERVERS / "s3_server.py"), "--self-test"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "AWS vectors and live round trip passed" in proc.stdout


def test_push_pull_round_trip_through_nginx_never_logs_the_token(project, nginx):
    url, dav = nginx
    project.write("")
    (project.root / "doc.json").write_text(DOCUMENT)
    env = ci_free_env(GPUEMU_BASELINE_TOKEN=TOKEN)
    push = project.run("baseline", "push", "main", url + "/ci/proj", "--file", "doc.json", "-v", env=env)
    assert push.returncode == 0, push.stderr
    assert (dav / "ci" / "proj" / "main.json").read_text() == DOCUMENT
    pull = project.run("baseline", "pull", url + "/ci/proj", "--out", "pulled.json", "-v", env=env)
    assert pull.returncode == 0, pull.stderr
    assert (project.root / "pulled.json").read_text() == DOCUMENT
    to_stdout = project.run("baseline", "pull", url + "/ci/proj", env=env)
    assert to_stdout.stdout == DOCUMENT
    missing = project.run("baseline", "pull", url + "/ci/proj", "--tag", "v9", "-v", env=env)
    assert missing.returncode == 0
    assert missing.stdout == ""
    assert f"warning: no baseline at {url}/ci/proj/v9.json: HTTP 404" in missing.stderr
    verbose = push.stdout + push.stderr + pull.stdout + pull.stderr + missing.stderr
    assert "PUT " + url + "/ci/proj/main.json -> 201" in verbose
    assert TOKEN not in verbose


def test_refused_credentials_exit_3_with_a_hint(project, nginx):
    url, _ = nginx
    project.write("")
    proc = project.run("baseline", "pull", url + "/ci/proj", env=ci_free_env(GPUEMU_BASELINE_TOKEN="wrong-token"))
    assert proc.returncode == 3
    assert "refused with HTTP 401" in proc.stderr and "GPUEMU_BASELINE_TOKEN" in proc.stderr
    assert "wrong-token" not in proc.stderr


def test_only_the_default_branch_pushes_unless_forced(project, tmp_path):
    project.write("")
    (project.root / "doc.json").write_text(DOCUMENT)
    store = tmp_path / "store"
    env = ci_free_env(GITHUB_REF="refs/heads/feature", GITHUB_EVENT_NAME="push")
    skipped = project.run("baseline", "push", "main", str(store), "--file", "doc.json", "--format", "json", env=env)
    assert skipped.returncode == 0, skipped.stderr
    assert json.loads(skipped.stdout)["pushed"] is False
    assert "not refs/heads/main" in skipped.stderr
    assert not (store / "main.json").exists()
    forced = project.run("baseline", "push", "main", str(store), "--file", "doc.json", "--force", env=env)
    assert forced.returncode == 0, forced.stderr
    assert (store / "main.json").read_text() == DOCUMENT
    env["GITHUB_REF"] = "refs/heads/main"
    assert project.run("baseline", "push", "main", "file://" + str(store), "--file", "doc.json",
                       env=env).returncode == 0


def test_signed_push_verified_pull_and_wrong_key_ignored(project, tmp_path):
    project.write("")
    (project.root / "doc.json").write_text(DOCUMENT)
    for name in ("good", "other"):
        assert project.run("keygen", "--out", str(tmp_path / name)).returncode == 0
    store = "file://" + str(tmp_path / "store")
    env = ci_free_env()
    push = project.run("baseline", "push", "main", store, "--file", "doc.json", "--sign-key",
                       str(tmp_path / "good" / "gpuemu.key"), env=env)
    assert push.returncode == 0, push.stderr
    assert json.loads((tmp_path / "store" / "main.json").read_text())["payloadType"] == \
        "application/vnd.gpuemu.baseline+json"
    good = project.run("baseline", "pull", store, "--pub", str(tmp_path / "good" / "gpuemu.pub"), env=env)
    assert good.returncode == 0 and good.stdout == DOCUMENT
    assert "signature verified" in good.stderr
    wrong = project.run("baseline", "pull", store, "--pub", str(tmp_path / "other" / "gpuemu.pub"), env=env)
    assert wrong.returncode == 0 and wrong.stdout == ""
    assert "ignored: none of its 1 signature(s) verifies" in wrong.stderr


def test_s3_round_trip_against_moto_with_signature_checks(project, python_server):
    """Push and pull through the binary against moto's S3 server with authentication on (the real
    implementation; it refuses a wrong secret, which moto_s3.py proves before it announces itself)."""
    moto = python_server("moto_s3.py", "--region", "us-west-2")
    project.write("")
    (project.root / "doc.json").write_text(DOCUMENT)
    env = ci_free_env(AWS_ACCESS_KEY_ID=moto["access_key"], AWS_SECRET_ACCESS_KEY=moto["secret_key"],
                      AWS_REGION="us-west-2", GPUEMU_S3_ENDPOINT=f"http://127.0.0.1:{moto['port']}")
    store = f"s3://{moto['bucket']}/p"
    push = project.run("baseline", "push", "main", store, "--file", "doc.json", env=env)
    assert push.returncode == 0, push.stderr
    pull = project.run("baseline", "pull", store, "-v", env=env)
    assert pull.returncode == 0 and pull.stdout == DOCUMENT, pull.stderr
    assert moto["secret_key"] not in pull.stderr
    env["AWS_SECRET_ACCESS_KEY"] = "not-the-secret"
    bad = project.run("baseline", "pull", store, env=env)
    assert bad.returncode == 3 and "HTTP 403" in bad.stderr and "SignatureDoesNotMatch" in bad.stderr
    bad_push = project.run("baseline", "push", "main", store, "--file", "doc.json", env=env)
    assert bad_push.returncode != 0 and "SignatureDoesNotMatch" in bad_push.stderr


def test_gh_artifact_pull_and_push_refusal(project, python_server, tmp_path):
    import zipfile
    with zipfile.ZipFile(tmp_path / "a.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("main.json", DOCUMENT)
    scenario = {"repo": "octo/k", "default_branch": "main", "token": TOKEN,
                "artifacts": [{"id": 5, "name": "gpuemu-baseline", "head_branch": "main", "expired": False,
                               "created_at": "2024-01-01T00:00:00Z", "zip": str(tmp_path / "a.zip")}]}
    (tmp_path / "scenario.json").write_text(json.dumps(scenario))
    ports = python_server("github_api.py", "--scenario", str(tmp_path / "scenario.json"))
    project.write("")
    env = ci_free_env(GITHUB_API_URL=f"http://127.0.0.1:{ports['api_port']}", GITHUB_REPOSITORY="octo/k",
                      GITHUB_TOKEN=TOKEN)
    pull = project.run("baseline", "pull", "gh-artifact://gpuemu-baseline", "-v", env=env)
    assert pull.returncode == 0 and pull.stdout == DOCUMENT, pull.stderr
    assert TOKEN not in pull.stderr
    with urllib.request.urlopen(f"http://127.0.0.1:{ports['api_port']}/__stats", timeout=10) as response:
        stats = json.load(response)
    assert stats["blob_requests"] == 1 and stats["blob_auth_headers"] == 0
    (project.root / "doc.json").write_text(DOCUMENT)
    push = project.run("baseline", "push", "main", "gh-artifact://gpuemu-baseline", "--file", "doc.json", env=env)
    assert push.returncode == 2
    assert "actions/upload-artifact" in push.stderr


def test_push_without_file_sends_the_stored_tag(project, tmp_path):
    project.write("")
    (project.root / "doc.json").write_text(DOCUMENT)
    env = ci_free_env()
    imported = project.run("baseline", "import", "doc.json", "--tag", "release", env=env)
    assert imported.returncode == 0, imported.stderr
    push = project.run("baseline", "push", "release", str(tmp_path / "remote"), env=env)
    assert push.returncode == 0, push.stderr
    pushed = json.loads((tmp_path / "remote" / "release.json").read_text())
    assert pushed["schema_version"] == 1 and pushed["kind"] == "gpuemu-baseline"
    missing = project.run("baseline", "push", "nope", str(tmp_path / "remote"), env=env)
    assert missing.returncode == 2 and "no baseline 'nope' in the store" in missing.stderr
