"""The GitHub Action without a Docker engine: action.yml against the action metadata schema, the
Dockerfile against GitHub's rules for Docker actions, docker/entrypoint.py run the way the runner
starts it (INPUT_* variables, GITHUB_* files, the workspace) with the real gpuemu binary, and every
workflow in examples/workflows through actionlint.
"""
import importlib.util
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time

import jsonschema
import pytest

from action_support import DOCKERFILE, action, dockerfile_instructions, input_variables, parse_outputs, stages
from e2e_support import REPO, one_op_toml

ENTRYPOINT = REPO / "docker" / "entrypoint.py"
SCHEMA = REPO / "tests" / "schemas" / "github-action.schema.json"
WORKFLOWS = REPO / "examples" / "workflows"
FAST = "test_cases = 2"


def entrypoint_module():
    spec = importlib.util.spec_from_file_location("gpuemu_action_entrypoint", ENTRYPOINT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- action.yml ---------------------------------------------------------------------------------

def test_action_metadata_matches_the_schema():
    jsonschema.validate(action(), json.loads(SCHEMA.read_text()))


def test_action_runs_the_prebuilt_image_of_its_release():
    runs = action()["runs"]
    assert set(runs) == {"using", "image"} and runs["using"] == "docker"
    # Pinned by a full version tag: a workflow that pins the action by tag or SHA pins the image too.
    assert re.fullmatch(r"docker://ghcr\.io/skelf/gpuemu-action:v1\.\d+\.\d+", runs["image"]), runs["image"]


def test_action_inputs_and_outputs_are_the_ones_the_entrypoint_and_gpuemu_use():
    meta = action()
    assert tuple(meta["inputs"]) == entrypoint_module().INPUTS
    assert set(meta["outputs"]) == {"passed", "failed", "not_run", "result"}
    assert all(isinstance(i.get("default", ""), str) for i in meta["inputs"].values()), \
        "the runner passes inputs as strings; write defaults as strings"


@pytest.mark.parametrize("mutation, where", [
    (lambda a: a.pop("description"), "description"),
    (lambda a: a["inputs"]["quick"].pop("description"), "description"),
    (lambda a: a["inputs"]["quick"].update({"type": "boolean"}), "type"),
    (lambda a: a["outputs"]["passed"].update({"value": "${{ steps.x.outputs.passed }}"}), "value"),
    (lambda a: a["runs"].pop("image"), "runs"),
    (lambda a: a["runs"].update({"using": "docker-compose"}), "runs"),
    (lambda a: a.update({"permissions": {"contents": "read"}}), "permissions"),
    (lambda a: a["branding"].update({"color": "pink"}), "pink"),
])
def test_schema_rejects_mistakes(mutation, where):
    broken = action()
    mutation(broken)
    with pytest.raises(jsonschema.ValidationError) as error:
        jsonschema.validate(broken, json.loads(SCHEMA.read_text()))
    assert where in str(error.value)


def test_docs_describe_every_input_and_output():
    docs = (REPO / "docs" / "action.md").read_text()
    meta = action()
    missing = [name for name in [*meta["inputs"], *meta["outputs"]] if f"`{name}`" not in docs]
    assert not missing, f"docs/action.md does not describe: {', '.join(missing)}"


# --- Dockerfile ---------------------------------------------------------------------------------

def test_dockerfile_follows_githubs_rules_for_docker_actions():
    instructions = dockerfile_instructions(DOCKERFILE.read_text())
    assert instructions[0][0] == "FROM"
    keywords = [k for k, _ in instructions]
    assert "USER" not in keywords, "Docker actions run as root: no USER"
    assert "WORKDIR" not in keywords, "the runner starts in GITHUB_WORKSPACE: no WORKDIR"
    entrypoints = [a for k, a in instructions if k == "ENTRYPOINT"]
    assert len(entrypoints) == 1
    assert json.loads(entrypoints[0]) == ["/usr/local/bin/gpuemu-action"], "exec form, an absolute path"
    assert instructions[-1][0] == "ENTRYPOINT"


def test_dockerfile_builds_the_static_binary_then_a_slim_python_image():
    build, final = stages(dockerfile_instructions(DOCKERFILE.read_text()))
    assert build["from"] == "debian:12 AS build"
    build_runs = " ".join(a for k, a in build["instructions"] if k == "RUN")
    assert "scripts/build-static.sh" in build_runs
    assert final["from"] == "debian:12-slim"
    runs = " ".join(a for k, a in final["instructions"] if k == "RUN")
    for package in ("python3", "python3-numpy", "ca-certificates"):
        assert re.search(rf"\s{re.escape(package)}(\s|$)", runs), package
    copies = [a.split() for k, a in final["instructions"] if k == "COPY"]
    assert ["--from=build", "/src/build-static/gpuemu", "/usr/local/bin/gpuemu"] in copies
    assert ["docker/entrypoint.py", "/usr/local/bin/gpuemu-action"] in copies
    # Where the binary finds its Python package: PREFIX/share/gpuemu/python next to PREFIX/bin.
    assert ["python/gpuemu", "/usr/local/share/gpuemu/python/gpuemu"] in copies
    assert os.access(ENTRYPOINT, os.X_OK), "COPY keeps the mode: the entrypoint must be executable in git"
    assert ENTRYPOINT.read_text().startswith("#!/usr/bin/env python3\n")


def dockerignore_regex(pattern):
    """A .dockerignore pattern as Docker matches it: from the context's root, '*' within one path
    element, '**' across elements; a matched directory excludes everything under it."""
    wildcards = {r"\*\*/": "(.*/)?", r"\*\*": ".*", r"\*": "[^/]*", r"\?": "[^/]"}
    body = re.sub(r"\\\*\\\*/|\\\*\\\*|\\\*|\\\?", lambda m: wildcards[m.group()], re.escape(pattern.strip("/")))
    return re.compile(f"^{body}(/.*)?$")


def test_dockerignore_keeps_what_the_build_copies():
    ignored = [line.strip() for line in (REPO / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")]
    assert not any(p.startswith("!") for p in ignored), "no exceptions: this check does not model them"
    regexes = [dockerignore_regex(p) for p in ignored]
    excluded = lambda path: any(r.match(path) for r in regexes)  # noqa: E731
    for needed in ("scripts/build-static.sh", "docker/entrypoint.py", "src/main.cpp", "CMakeLists.txt",
                   "policies/strict.toml", "cmake/Dependencies.cmake"):
        assert not excluded(needed), needed
    for local in (".git/config", "build/gpuemu", "build-static/gpuemu", "third_party/build/prefix/lib/libcurl.a",
                  "python/gpuemu/__pycache__/x.pyc"):
        assert excluded(local), local


# --- the entrypoint, run as the runner runs it ----------------------------------------------------

class Runner:
    """One action step: a workspace holding a project, the runner's files, and the entrypoint's result."""

    def __init__(self, project, tmp_path, gpuemu_bin):
        self.project = project
        self.workspace = project.root
        self.files = tmp_path / "runner"
        self.files.mkdir()
        self.output = self.files / "output"
        self.summary = self.files / "summary.md"
        self.tmp = self.files / "tmp"
        self.tmp.mkdir()
        self.binary = gpuemu_bin

    def env(self, inputs):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_", "RUNNER_"))}
        env.update(input_variables(inputs))
        env.update({
            "GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_OUTPUT": str(self.output), "GITHUB_STEP_SUMMARY": str(self.summary),
            "GPUEMU_BIN": str(self.binary), "GPUEMU_HOME": str(self.project.home), "HOME": str(self.workspace),
            "TMPDIR": str(self.tmp),
        })
        return env

    def start(self, inputs=None, args=(), env=None):
        full_env = self.env(inputs or {})
        full_env.update(env or {})
        self.output.write_text("")
        self.summary.write_text("")
        # Started from elsewhere: the entrypoint must move into GITHUB_WORKSPACE itself.
        return subprocess.Popen([sys.executable, str(ENTRYPOINT), *args], cwd=self.files, env=full_env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def run(self, inputs=None, args=(), env=None, timeout=300):
        proc = self.start(inputs, args, env)
        stdout, stderr = proc.communicate(timeout=timeout)
        return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)

    def outputs(self):
        return parse_outputs(self.output.read_text())


@pytest.fixture
def runner(project, tmp_path, gpuemu_bin):
    return Runner(project, tmp_path, gpuemu_bin)


def correct(project):
    toml = one_op_toml("op_identity.py", extra='source = "op_identity.py"', validation=FAST)
    return project.write(toml, ["op_identity.py", "ref_identity.py"])


def buggy(project):
    toml = one_op_toml("op_off_by_tail.py", extra='source = "op_off_by_tail.py:7"', validation=FAST)
    return project.write(toml, ["op_off_by_tail.py", "ref_identity.py"])


def test_passing_project(runner):
    correct(runner.project)
    proc = runner.run({"iterations": "4", "seed": "3", "out": "reports/gpuemu", "junit-path": "artifacts/junit.xml",
                       "sarif-path": "artifacts/gpuemu.sarif", "summary-path": "summary.md"})
    assert proc.returncode == 0, proc.stderr
    assert runner.outputs() == {"passed": "true", "failed": "0", "not_run": "0", "result": "reports/gpuemu/result.json"}
    out = runner.workspace / "reports" / "gpuemu"
    result = json.loads((out / "result.json").read_text())
    assert result["passed"] is True and result["seed"] == "3" and result["ops"][0]["total"] == 2 + 4
    for copy, original in (("artifacts/junit.xml", "junit.xml"), ("artifacts/gpuemu.sarif", "gpuemu.sarif"),
                           ("summary.md", "summary.md")):
        assert (runner.workspace / copy).read_bytes() == (out / original).read_bytes(), copy
    assert (out / "summary.md").read_text() in runner.summary.read_text()
    assert "::error" not in proc.stdout
    assert "--iterations 4 --seed 3 --out reports/gpuemu" in proc.stderr


def test_failing_project(runner):
    buggy(runner.project)
    proc = runner.run({"iterations": "8", "seed": "2", "junit-path": "junit.xml", "sarif-path": "sarif/gpuemu.sarif"})
    assert proc.returncode == 1, proc.stderr
    outputs = runner.outputs()
    result = json.loads((runner.workspace / "gpuemu-out" / "result.json").read_text())
    failed = sum(op["failed"] + op["errors"] for op in result["ops"])
    assert failed > 0
    assert outputs == {"passed": "false", "failed": str(failed), "not_run": "0", "result": "gpuemu-out/result.json"}
    errors = [line for line in proc.stdout.splitlines() if line.startswith("::error ")]
    assert errors and "file=op_off_by_tail.py,line=7" in errors[0]
    sarif = json.loads((runner.workspace / "sarif" / "gpuemu.sarif").read_text())
    assert sarif["runs"][0]["results"], "the copied SARIF holds the failure"
    assert "<failure" in (runner.workspace / "junit.xml").read_text()
    assert "gpuemu reproduce" in runner.summary.read_text()


def test_report_paths_may_name_directories_and_unwritable_ones_fail_the_step(runner):
    correct(runner.project)
    (runner.workspace / "existing").mkdir()
    (runner.workspace / "blocker").write_text("a file where a directory is needed\n")
    proc = runner.run({"iterations": "2", "junit-path": "reports/", "sarif-path": "existing",
                       "summary-path": "blocker/summary.md"})
    assert proc.returncode == 3, proc.stderr
    assert (runner.workspace / "reports" / "junit.xml").is_file()
    assert (runner.workspace / "existing" / "gpuemu.sarif").is_file()
    assert "::error title=gpuemu action::cannot copy gpuemu-out/summary.md to blocker/summary.md: " in proc.stdout
    assert runner.outputs()["passed"] == "true", "the run passed; only the copy failed"


def test_quick_input_runs_a_quick_run(runner):
    correct(runner.project)
    for quick, expected in (("true", True), ("FALSE", False)):
        proc = runner.run({"quick": quick, "iterations": "2"})
        assert proc.returncode == 0, proc.stderr
        result = json.loads((runner.workspace / "gpuemu-out" / "result.json").read_text())
        assert result["ci"]["quick"] is expected, quick


def test_allow_partial_input_reaches_the_run(runner):
    # What --allow-partial does to a cut run is tested in test_ci_partial.py; here, that the input
    # reaches `ci run` (result.json records it) and that a bad value is a bad input.
    correct(runner.project)
    for value, expected in (("true", True), ("false", False)):
        proc = runner.run({"allow-partial": value, "iterations": "2"})
        assert proc.returncode == 0, proc.stderr
        result = json.loads((runner.workspace / "gpuemu-out" / "result.json").read_text())
        assert result["ci"]["allow_partial"] is expected, value
    proc = runner.run({"allow-partial": "yes"})
    assert proc.returncode == 2
    assert "input 'allow-partial' must be true or false, got 'yes'" in proc.stdout


def test_policy_input_lays_a_pack_over_the_config(runner):
    correct(runner.project)
    (runner.workspace / "ci-pack.toml").write_text("[ci]\nquick_iterations = 5\n")
    proc = runner.run({"quick": "true", "policy": "ci-pack.toml"})
    assert proc.returncode == 0, proc.stderr
    packed = json.loads((runner.workspace / "gpuemu-out" / "result.json").read_text())
    assert packed["ops"][0]["total"] == 2 + 5
    proc = runner.run({"quick": "true", "iterations": "5", "out": "plain"})
    assert proc.returncode == 0, proc.stderr
    plain = json.loads((runner.workspace / "plain" / "result.json").read_text())
    assert plain["config_digest"] != packed["config_digest"], "the digest covers the pack's values"


def test_unknown_policy_pack_is_a_config_error(runner):
    correct(runner.project)
    proc = runner.run({"policy": "strct"})
    assert proc.returncode == 2, proc.stderr
    assert "unknown policy pack 'strct'" in proc.stderr and "did you mean 'strict'?" in proc.stderr
    assert runner.outputs() == {"passed": "false"}


def test_config_input_names_the_project_file(runner):
    correct(runner.project)
    sub = runner.workspace / "project"
    sub.mkdir()
    (runner.workspace / "gpuemu.toml").rename(sub / "gpuemu.toml")
    for script in ("_proto.py", "op_identity.py", "ref_identity.py"):
        (runner.workspace / script).rename(sub / script)
    proc = runner.run({"config": "project/gpuemu.toml", "iterations": "2"})
    assert proc.returncode == 0, proc.stderr
    assert runner.outputs()["passed"] == "true"


@pytest.mark.parametrize("inputs, message", [
    ({"quick": "yes"}, "input 'quick' must be true or false, got 'yes'"),
    ({"shard": "0/2"}, "input 'shard' must be I/N with 1 <= I <= N, got '0/2' (e.g. shard: ${{ matrix.shard }}/4)"),
    ({"shard": "two"}, "input 'shard' must be I/N with 1 <= I <= N, got 'two' (e.g. shard: ${{ matrix.shard }}/4)"),
    ({"iterations": "ten"}, "input 'iterations' must be a whole number, got 'ten' (e.g. iterations: 100)"),
    ({"iterations": "0"}, "input 'iterations' must be at least 1, got 0"),
    ({"jobs": "-1"}, "input 'jobs' must be a whole number, got '-1' (e.g. jobs: 4)"),
    ({"seed": str(2**64)}, f"input 'seed' must be from 0 to {2**64 - 1}, got {2**64}"),
    ({"fail-on": "sometimes"}, "input 'fail-on' must be one of failures, regressions, never, got 'sometimes'"),
])
def test_bad_input_is_named_and_nothing_runs(runner, inputs, message):
    correct(runner.project)
    proc = runner.run({**inputs, "junit-path": "junit.xml"})
    assert proc.returncode == 2, proc.stderr
    assert f"::error title=gpuemu action::{message}; see docs/action.md" in proc.stdout.splitlines()
    assert f"gpuemu-action: error: {message}" in proc.stderr
    assert not (runner.workspace / "gpuemu-out").exists(), "gpuemu must not run"
    assert runner.outputs() == {"passed": "false"}


def test_config_error_in_gpuemu_gives_its_exit_code_and_passed_false(runner):
    correct(runner.project)
    proc = runner.run({"config": "missing/gpuemu.toml", "junit-path": "junit.xml"})
    assert proc.returncode == 2, proc.stderr
    assert "missing/gpuemu.toml" in proc.stderr
    assert "not copying it to junit.xml" in proc.stderr
    assert not (runner.workspace / "junit.xml").exists()
    assert runner.outputs() == {"passed": "false"}


def test_missing_binary_is_an_environment_error(runner):
    correct(runner.project)
    proc = runner.run(env={"GPUEMU_BIN": str(runner.files / "no-gpuemu")})
    assert proc.returncode == 3
    assert f"no gpuemu binary at {runner.files / 'no-gpuemu'}: set GPUEMU_BIN" in proc.stdout
    assert runner.outputs() == {"passed": "false"}


def test_arguments_of_the_entrypoint_go_to_ci_run(runner):
    buggy(runner.project)
    proc = runner.run({"iterations": "3"}, args=("--junit-flavor", "strict"))
    assert proc.returncode == 1, proc.stderr
    junit = (runner.workspace / "gpuemu-out" / "junit.xml").read_text()
    assert "<failure" in junit and 'file="' not in junit


def keygen(runner):
    proc = runner.project.run("keygen", "--out", "keys")
    assert proc.returncode == 0, proc.stderr
    return runner.workspace / "keys" / "gpuemu.key", runner.workspace / "keys" / "gpuemu.pub"


def verify(runner, pub):
    proc = runner.project.run("report", "verify", "gpuemu-out/REPORT.json", "--pub", str(pub), "--artifacts", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_sign_key_as_a_path(runner):
    correct(runner.project)
    key, pub = keygen(runner)
    proc = runner.run({"iterations": "2", "sign-key": "keys/gpuemu.key"})
    assert proc.returncode == 0, proc.stderr
    verify(runner, pub)


def test_sign_key_as_pem_text_never_reaches_the_log_or_the_workspace(runner):
    correct(runner.project)
    key, pub = keygen(runner)
    pem = key.read_text()
    key.unlink()  # only the secret's text is left
    proc = runner.run({"iterations": "2", "sign-key": pem})
    assert proc.returncode == 0, proc.stderr
    verify(runner, pub)
    body = "".join(pem.strip().splitlines()[1:-1])
    for text in (proc.stdout, proc.stderr, runner.summary.read_text(), runner.output.read_text()):
        assert "BEGIN PRIVATE KEY" not in text and body not in text
    assert "--sign-key ***" in proc.stderr
    assert list(runner.tmp.iterdir()) == [], "the temporary key file is removed"
    assert not any(body in p.read_text(errors="replace") for p in runner.workspace.rglob("*") if p.is_file())


def children_of(pid):
    found = []
    for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def alive(pid):
    """True while `pid` runs (a zombie waiting for its parent counts as gone)."""
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_sigterm_reaches_gpuemu(runner):
    """In a container the entrypoint is PID 1; a cancelled job's SIGTERM must stop gpuemu, not orphan it."""
    toml = one_op_toml("op_hang.py", validation="test_cases = 1").replace("timeout = 5", "timeout = 60")
    runner.project.write(toml, ["op_hang.py", "ref_identity.py"])
    proc = runner.start({"iterations": "1"}, env={"HANG_PID_FILE": str(runner.files / "hang.pids")})
    deadline = time.monotonic() + 60
    while not (runner.files / "hang.pids").exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the hanging op never started"
        time.sleep(0.1)
    gpuemu = children_of(proc.pid)
    try:
        assert len(gpuemu) == 1
        proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail("the entrypoint did not stop within 30 s of SIGTERM")
        assert not alive(gpuemu[0]), "gpuemu outlived the entrypoint"
        assert proc.returncode != 0
    finally:
        # Left only when the test failed: gpuemu kills its scripts' process groups when it stops.
        for pid in gpuemu:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)
        for pid in (runner.files / "hang.pids").read_text().split():
            if alive(int(pid)):
                os.kill(int(pid), signal.SIGKILL)


# --- example workflows ----------------------------------------------------------------------------

def actionlint_path():
    found = shutil.which("actionlint")
    if found:
        return found
    try:
        gopath = subprocess.run(["go", "env", "GOPATH"], capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        gopath = ""
    candidate = pathlib.Path(gopath) / "bin" / "actionlint" if gopath else None
    return str(candidate) if candidate and candidate.is_file() else None


def example_workflows():
    return sorted(WORKFLOWS.glob("*.yml"))


def repository_workflows():
    return sorted((REPO / ".github" / "workflows").glob("*.yml"))


def test_there_are_example_workflows():
    names = {p.stem for p in example_workflows()}
    assert {"pre-merge", "nightly", "sharded", "publish", "release"} <= names


@pytest.mark.parametrize("workflow", example_workflows() + repository_workflows(),
                         ids=lambda p: str(p.relative_to(REPO)))
def test_example_workflow_passes_actionlint(workflow):
    actionlint = actionlint_path()
    if actionlint is None:
        reason = "actionlint is not installed (scripts/install-deps.sh installs it with go install)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason + "; CI must lint the example workflows")
        print(f"skipping: {reason}")
        pytest.skip(reason)
    proc = subprocess.run([actionlint, "-no-color", str(workflow)], capture_output=True, text=True, timeout=120,
                          cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_catches_a_broken_workflow(tmp_path):
    """The lint is not vacuous: a workflow with an unknown key and a bad expression fails it."""
    actionlint = actionlint_path()
    if actionlint is None:
        if os.environ.get("CI") == "true":
            pytest.fail("actionlint is not installed; CI must lint the example workflows")
        pytest.skip("actionlint is not installed")
    broken = tmp_path / "broken.yml"
    broken.write_text("on: pull_request\njobs:\n  a:\n    runs-on: ubuntu-latest\n    step:\n      - run: echo\n"
                      "    if: ${{ github.nope( }}\n")
    proc = subprocess.run([actionlint, "-no-color", str(broken)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "step" in proc.stdout


# --- comment-on-pr ------------------------------------------------------------------------------

PR_REPO, PR_NUMBER, PR_HEAD, PR_TOKEN = "octo/kernels", 12, "3c" * 20, "ghs_actionE2eToken0123456789"


def whole_file_patch(text):
    """The `patch` GitHub sends for a newly added file: one hunk of added lines."""
    lines = text.splitlines()
    return f"@@ -0,0 +1,{len(lines)} @@\n" + "\n".join("+" + line for line in lines)


@pytest.fixture
def pr_server(runner):
    from github_pr_server import PullRequestServer
    buggy(runner.project)
    source = (runner.workspace / "op_off_by_tail.py").read_text()
    with PullRequestServer(PR_REPO, PR_NUMBER, PR_HEAD, [("op_off_by_tail.py", "added", whole_file_patch(source))],
                           PR_TOKEN) as server:
        yield server


def pr_env(runner, server, event):
    event_path = runner.files / "event.json"
    event_path.write_text(json.dumps(event))
    return {"GITHUB_EVENT_PATH": str(event_path), "GITHUB_EVENT_NAME": "pull_request" if "pull_request" in event
            else "push", "GITHUB_API_URL": server.url, "GITHUB_REPOSITORY": PR_REPO}


def test_comment_on_pr_posts_one_review_on_the_diff_line(runner, pr_server):
    env = pr_env(runner, pr_server, {"pull_request": {"number": PR_NUMBER}})
    proc = runner.run({"iterations": "6", "seed": "2", "comment-on-pr": "true", "github-token": PR_TOKEN}, env=env)
    assert proc.returncode == 1, proc.stderr  # the gate's verdict; the review does not change it
    assert pr_server.violations == []
    [review] = pr_server.reviews
    [comment] = pr_server.comments
    assert (comment["path"], comment["line"]) == ("op_off_by_tail.py", 7) and "gpuemu reproduce" in comment["body"]
    assert review["commit_id"] == PR_HEAD
    assert PR_TOKEN not in proc.stdout + proc.stderr
    # The only warning is the note that the quick run left out some of the op's corner cases.
    assert [w for w in proc.stdout.splitlines() if w.startswith("::warning") and "corner cases" not in w] == []
    # A re-run of the same commit edits nothing and adds nothing.
    pr_server.reset_log()
    again = runner.run({"iterations": "6", "seed": "2", "comment-on-pr": "true", "github-token": PR_TOKEN}, env=env)
    assert again.returncode == 1
    assert pr_server.writes() == [] and len(pr_server.reviews) == 1


def test_comment_on_pr_outside_a_pull_request_is_a_notice(runner, pr_server):
    env = pr_env(runner, pr_server, {"ref": "refs/heads/main"})
    proc = runner.run({"iterations": "3", "comment-on-pr": "true", "github-token": PR_TOKEN}, env=env)
    assert proc.returncode == 1
    assert "::notice title=gpuemu action::comment-on-pr: this run was not started by a pull request" in proc.stdout
    assert pr_server.requests == []


def test_a_review_that_cannot_be_posted_is_a_warning_not_a_verdict(runner, pr_server):
    pr_server.force_status["POST"] = (403, {"message": "Resource not accessible by integration",
                                            "documentation_url": "https://docs.github.com/rest"})
    env = pr_env(runner, pr_server, {"pull_request": {"number": PR_NUMBER}})
    proc = runner.run({"iterations": "3", "comment-on-pr": "true", "github-token": PR_TOKEN}, env=env)
    assert proc.returncode == 1, proc.stderr
    assert "::warning title=gpuemu action::comment-on-pr: the review could not be posted" in proc.stdout


def test_comment_on_pr_without_a_token_is_a_bad_input(runner, pr_server):
    env = pr_env(runner, pr_server, {"pull_request": {"number": PR_NUMBER}})
    proc = runner.run({"comment-on-pr": "true", "github-token": ""}, env=env)
    assert proc.returncode == 2
    assert "input 'comment-on-pr' is true but 'github-token' is empty" in proc.stdout
    assert pr_server.requests == []


# --- the requirements input: frameworks installed before the run, cached between runs --------------

def tiny_wheel(folder):
    """A wheel of a package `tinyfw` that the project's op imports; pip installs it offline."""
    import zipfile

    folder.mkdir()
    files = {
        "tinyfw.py": "def identity(x):\n    return x\n",
        "tinyfw-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinyfw\nVersion: 1.0\n",
        "tinyfw-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: gpuemu-tests\nRoot-Is-Purelib: true\n"
                                      "Tag: py3-none-any\n",
    }
    files["tinyfw-1.0.dist-info/RECORD"] = "".join(f"{name},,\n" for name in files) + "tinyfw-1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(folder / "tinyfw-1.0-py3-none-any.whl", "w") as wheel:
        for name, text in files.items():
            wheel.writestr(name, text)


def framework_project(project):
    toml = one_op_toml("ops_tiny.py", validation=FAST).replace('op_script = "ops_tiny.py"', 'module = "ops_tiny:op"')
    project.write(toml, ["ref_identity.py"])
    (project.root / "ops_tiny.py").write_text("import tinyfw\n\n\ndef op(inputs):\n    return tinyfw.identity(inputs['x'])\n")
    tiny_wheel(project.root / "wheels")
    (project.root / "requirements-gpuemu.txt").write_text("--no-index\n--find-links wheels\ntinyfw==1.0\n")
    return project


def test_requirements_are_installed_before_the_run_and_cached(runner):
    framework_project(runner.project)
    first = runner.run({"requirements": "requirements-gpuemu.txt", "iterations": "2", "seed": "1"})
    assert first.returncode == 0, first.stderr[-3000:]
    assert "pip install" in first.stderr and "--target" in first.stderr
    sites = list((runner.workspace / ".gpuemu-pip").glob("site-*/tinyfw.py"))
    assert len(sites) == 1, "installed into one folder of pip-cache"
    # The second run must not need pip: the wheel is gone, only the cache can provide tinyfw.
    shutil.rmtree(runner.workspace / "wheels")
    second = runner.run({"requirements": "requirements-gpuemu.txt", "iterations": "2", "seed": "1"})
    assert second.returncode == 0, second.stderr[-3000:]
    assert "cached in" in second.stderr and "pip install" not in second.stderr
    assert runner.outputs()["passed"] == "true"


def test_without_the_requirements_the_op_cannot_import_its_framework(runner):
    # The same project without the input: the op fails to load, so the test above proves the install.
    # gpuemu's load check finds it before any case runs: a config error (exit 2) whose hint names
    # the `requirements` input.
    framework_project(runner.project)
    proc = runner.run({"iterations": "2", "seed": "1"})
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "op under test 'ops_tiny:op' of op 'op' does not load: ModuleNotFoundError: No module named 'tinyfw'" \
        in proc.stderr
    assert "hint: the code imports 'tinyfw', which this Python cannot import: install it; in the GitHub Action, " \
        "list it in the file the 'requirements' input names (docs/action.md)" in proc.stderr
    assert runner.outputs()["passed"] == "false"


def test_a_changed_requirements_file_installs_again_into_a_new_folder(runner):
    framework_project(runner.project)
    inputs = {"requirements": "requirements-gpuemu.txt", "pip-cache": "cache/pip", "iterations": "2", "seed": "1"}
    assert runner.run(inputs).returncode == 0
    (runner.workspace / "requirements-gpuemu.txt").write_text("--no-index\n--find-links wheels\ntinyfw>=1.0\n")
    proc = runner.run(inputs)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "pip install" in proc.stderr
    assert len(list((runner.workspace / "cache" / "pip").glob("site-*"))) == 2


def test_missing_requirements_file_is_a_bad_input(runner):
    correct(runner.project)
    proc = runner.run({"requirements": "nope.txt"})
    assert proc.returncode == 2
    assert "input 'requirements' names 'nope.txt', which is not a file" in proc.stdout
    assert runner.outputs() == {"passed": "false"}


def test_a_failing_install_is_an_environment_error(runner):
    correct(runner.project)
    (runner.workspace / "requirements-gpuemu.txt").write_text("--no-index\nno-such-package-gpuemu==9\n")
    proc = runner.run({"requirements": "requirements-gpuemu.txt"})
    assert proc.returncode == 3, proc.stderr[-3000:]
    assert "pip could not install input 'requirements' (requirements-gpuemu.txt)" in proc.stdout
    assert runner.outputs() == {"passed": "false"}
    assert not list((runner.workspace / ".gpuemu-pip").glob("site-*/.gpuemu-installed"))
