"""`gpuemu ci publish --pr N` end to end against a GitHub-API-shaped server (github_pr_server.py).

The result.json inputs come from real `gpuemu ci run`s of a small project with three failing ops:
`tail` whose source line is an added line of the PR's diff, `nan` whose source file is in the PR
but whose line is not, and `shape` with no source at all. The server checks every request and
payload against the REST API's documented shapes; each test asserts it found no violation.
"""
import difflib
import json
import os
import pathlib
import shutil
import subprocess

import pytest

from github_pr_server import PullRequestServer

# One xdist worker for the module (scripts/test.sh: --dist loadgroup): its `results` fixture makes
# four ci runs, which every worker that ran one of these tests would otherwise make again.
pytestmark = pytest.mark.xdist_group("pr_review")

SCRIPTS = pathlib.Path(__file__).resolve().parent / "scripts"
REPO_NAME = "octo/kernels"
PR = 7
HEAD = "1f" * 20
TOKEN = "ghs_e2eTokenValue0123456789"
OP_SCRIPTS = ("op_off_by_tail.py", "op_nan.py", "op_wrong_shape.py", "op_identity.py", "ref_identity.py")


def project_toml(buggy: bool, tail_line: int = 7) -> str:
    ops = [("tail", "op_off_by_tail.py", f"op_off_by_tail.py:{tail_line}"), ("nan", "op_nan.py", "op_nan.py:7"),
           ("shape", "op_wrong_shape.py", "")]
    text = ('[project]\nname = "pr-review"\n\n[validation]\ndtypes = ["float32"]\nseed = 7\ntimeout = 5\n'
            "test_cases = 2\n")
    for name, script, source in ops:
        text += (f'\n[[ops]]\nname = "{name}"\nop_script = "{script if buggy else "op_identity.py"}"\n'
                 f'reference = "ref_identity.py"\nsource = "{source}"\n\n[ops.schema]\n'
                 'dims = { M = [1, 8], N = [17, 70] }\ninputs = { x = ["M", "N"] }\n')
    return text


def patch(old: str, new: str) -> str:
    """A GitHub `patch` field: the unified diff's hunks without the ---/+++ header."""
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=3)
    return "\n".join(list(lines)[2:])


def pr_files(fixed=False):
    """120 documentation files first, so the op sources come on page 2 of 100; then the sources."""
    files = [(f"docs/page-{i:03}.md", "added", f"@@ -0,0 +1 @@\n+page {i}") for i in range(120)]
    tail = (SCRIPTS / "op_off_by_tail.py").read_text()
    tail_lines = tail.splitlines()
    without_bug = "\n".join(tail_lines[:5] + tail_lines[7:]) + "\n"
    if fixed:
        files.append(("op_off_by_tail.py", "modified", patch(tail, tail.replace("tail bug", "tail fix"))))
    else:
        files.append(("op_off_by_tail.py", "modified", patch(without_bug, tail)))
    nan = (SCRIPTS / "op_nan.py").read_text()
    files.append(("op_nan.py", "modified", patch(nan.replace("never a pass", "always wrong"), nan)))
    files.append(("assets/plot.png", "added", None))  # binary: GitHub sends no patch
    return files


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GPUEMU_"))}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def results(tmp_path_factory, gpuemu_bin):
    """result.json of ci runs: failing (seeds 11 and 12), failing with tail's source on line 6, passing."""
    root = tmp_path_factory.mktemp("pr-project")
    for name in ("_proto.py", *OP_SCRIPTS):
        shutil.copy(SCRIPTS / name, root / name)
    out = {}
    for label, toml, seed in (("first", project_toml(True), "11"), ("changed", project_toml(True), "12"),
                              ("moved", project_toml(True, tail_line=6), "11"), ("fixed", project_toml(False), "11")):
        (root / "gpuemu.toml").write_text(toml)
        env = clean_env(GPUEMU_HOME=str(root / ".home"), HOME=str(root))
        proc = subprocess.run([str(gpuemu_bin), "ci", "run", "--iterations", "4", "--seed", seed, "--out", label],
                              cwd=root, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == (0 if label == "fixed" else 1), proc.stderr
        out[label] = root / label / "result.json"
    out["root"] = root
    return out


@pytest.fixture
def server():
    with PullRequestServer(REPO_NAME, PR, HEAD, pr_files(), TOKEN) as s:
        yield s


def publish(gpuemu_bin, results, server, label, *args, token=TOKEN, env_extra=None):
    env = clean_env(GITHUB_TOKEN=token, GITHUB_REPOSITORY=REPO_NAME, GITHUB_API_URL=server.url, HOME=str(results["root"]))
    if token is None:
        del env["GITHUB_TOKEN"]
    env.update(env_extra or {})
    return subprocess.run([str(gpuemu_bin), "ci", "publish", "--pr", str(PR), "--result", str(results[label]), "-v",
                           *args], cwd=results["root"], env=env, capture_output=True, text=True, timeout=120)


def sarif_fingerprint(results, label, op):
    sarif = json.loads((results[label].parent / "gpuemu.sarif").read_text())
    found = [r for r in sarif["runs"][0]["results"] if r["properties"]["op"] == op]
    assert len(found) == 1
    return found[0]["partialFingerprints"]["gpuemuFinding/v1"]


def test_first_run_creates_one_review_with_comments_on_diff_lines(gpuemu_bin, results, server):
    proc = publish(gpuemu_bin, results, server, "first")
    assert proc.returncode == 0, proc.stderr
    assert server.violations == []
    assert "review created" in proc.stdout and "1 line comment(s) created" in proc.stdout
    assert TOKEN not in proc.stdout + proc.stderr
    assert all(r["authorization"] == f"Bearer {TOKEN}" for r in server.requests)
    # The files came in two pages of 100, following the Link header.
    pages = [r["query"].get("page", ["1"])[0] for r in server.requests if r["path"].endswith("/files")]
    assert pages == ["1", "2"]
    assert all(r["query"]["per_page"] == ["100"] for r in server.requests if r["path"].endswith("/files"))

    writes = server.writes()
    assert [(w["method"], w["path"]) for w in writes] == [("POST", f"/repos/{REPO_NAME}/pulls/{PR}/reviews")]
    review = writes[0]["body"]
    assert review["event"] == "COMMENT" and review["commit_id"] == HEAD
    [comment] = review["comments"]
    assert {k: comment[k] for k in ("path", "line", "side")} == {"path": "op_off_by_tail.py", "line": 7, "side": "RIGHT"}
    body = comment["body"]
    first_line = body.split("\n", 1)[0]
    assert first_line == f"<!-- gpuemu:finding v1 {sarif_fingerprint(results, 'first', 'tail')} -->"
    assert "`tail` (`float32`)" in body and "gpuemu: output outside tolerance" in body
    assert "cases failed. Worst case: seed" in body and "Worst element: `out[" in body
    assert "```sh\ngpuemu reproduce " in body

    text = review["body"]
    assert text.startswith("<!-- gpuemu:review v1 -->\n## ❌ gpuemu: 3 problems")
    assert "Commented on the lines of this diff (1):" in text
    assert "Outside the lines of this diff (2):" in text
    assert "`nan` (`float32`)" in text and "at `op_nan.py:7`" in text
    # `shape` writes `source = ""`: absent, so inferred from its cold script (path, no line).
    assert "`shape` (`float32`)" in text and "at `op_wrong_shape.py`" in text, text
    assert text.count("```sh\ngpuemu reproduce ") == 2
    assert len(server.reviews) == 1 and len(server.comments) == 1


def test_second_identical_run_writes_nothing(gpuemu_bin, results, server):
    assert publish(gpuemu_bin, results, server, "first").returncode == 0
    server.reset_log()
    proc = publish(gpuemu_bin, results, server, "first")
    assert proc.returncode == 0, proc.stderr
    assert server.writes() == [] and server.violations == []
    assert "review unchanged" in proc.stdout and "1 unchanged" in proc.stdout
    assert len(server.reviews) == 1 and len(server.comments) == 1


def test_changed_result_updates_the_comment_and_the_review(gpuemu_bin, results, server):
    assert publish(gpuemu_bin, results, server, "first").returncode == 0
    before = server.comments[0]["body"]
    server.reset_log()
    proc = publish(gpuemu_bin, results, server, "changed")
    assert proc.returncode == 0, proc.stderr
    assert server.violations == []
    writes = {(w["method"], w["path"]): w["body"] for w in server.writes()}
    comment_id, review_id = server.comments[0]["id"], server.reviews[0]["id"]
    assert set(writes) == {("PATCH", f"/repos/{REPO_NAME}/pulls/comments/{comment_id}"),
                           ("PUT", f"/repos/{REPO_NAME}/pulls/{PR}/reviews/{review_id}")}
    after = server.comments[0]["body"]
    assert after != before and after.split("\n")[0] == before.split("\n")[0]
    tail = next(op for op in json.loads(results["changed"].read_text())["ops"] if op["op"] == "tail")
    assert any(f"seed {f['seed']}: " in after for f in tail["failures"])
    assert "review updated" in proc.stdout and "1 updated" in proc.stdout
    assert len(server.reviews) == 1 and len(server.comments) == 1


def test_moved_finding_gets_a_new_comment_in_a_follow_up_review(gpuemu_bin, results, server):
    assert publish(gpuemu_bin, results, server, "first").returncode == 0
    old_id = server.comments[0]["id"]
    server.reset_log()
    proc = publish(gpuemu_bin, results, server, "moved")
    assert proc.returncode == 0, proc.stderr
    assert server.violations == []
    methods = sorted(w["method"] for w in server.writes())
    assert methods == ["PATCH", "POST", "PUT"]
    post = next(w["body"] for w in server.writes() if w["method"] == "POST")
    assert post["body"].startswith("<!-- gpuemu:review-comments v1 -->")
    assert [(c["path"], c["line"]) for c in post["comments"]] == [("op_off_by_tail.py", 6)]
    old = next(c for c in server.comments if c["id"] == old_id)
    assert old["body"].startswith("<!-- gpuemu:finding-moved v1 ") and "`op_off_by_tail.py:6`" in old["body"]
    assert server.reviews[0]["body"].startswith("<!-- gpuemu:review v1 -->")
    assert "at `op_off_by_tail.py:6`" in server.reviews[0]["body"]
    server.reset_log()
    assert publish(gpuemu_bin, results, server, "moved").returncode == 0
    assert server.writes() == []


def test_fixed_run_marks_the_review_and_comment_fixed(gpuemu_bin, results, server):
    assert publish(gpuemu_bin, results, server, "first").returncode == 0
    fixed_head = "2e" * 20
    server.push(fixed_head, pr_files(fixed=True))
    server.reset_log()
    proc = publish(gpuemu_bin, results, server, "fixed")
    assert proc.returncode == 0, proc.stderr
    assert server.violations == []
    assert sorted(w["method"] for w in server.writes()) == ["PATCH", "PUT"]
    review = server.reviews[0]["body"]
    assert review.startswith("<!-- gpuemu:review v1 -->\n## ✅ gpuemu: fixed")
    assert f"as of commit {fixed_head}" in review
    comment = server.comments[0]["body"]
    assert "✅ **Fixed** as of commit " + fixed_head in comment and "<details>" in comment
    assert "review updated" in proc.stdout and "1 marked fixed or moved" in proc.stdout
    server.reset_log()
    assert publish(gpuemu_bin, results, server, "fixed").returncode == 0
    assert server.writes() == []


def test_passing_run_without_an_earlier_review_posts_nothing(gpuemu_bin, results, server):
    proc = publish(gpuemu_bin, results, server, "fixed")
    assert proc.returncode == 0, proc.stderr
    assert server.writes() == [] and "review none" in proc.stdout


def test_refused_and_missing_tokens_exit_3_with_what_to_do(gpuemu_bin, results, server):
    refused = publish(gpuemu_bin, results, server, "first", token="ghs_wrongTokenValue42")
    assert refused.returncode == 3
    assert "GitHub refused the token from $GITHUB_TOKEN (HTTP 401: Bad credentials)" in refused.stderr
    assert "ghs_wrongTokenValue42" not in refused.stdout + refused.stderr
    missing = publish(gpuemu_bin, results, server, "first", token=None)
    assert missing.returncode == 3
    assert "$GITHUB_TOKEN is not set or empty" in missing.stderr and "pull-requests: write" in missing.stderr
    other = publish(gpuemu_bin, results, server, "first", "--token-env", "MY_PR_TOKEN", token=None,
                    env_extra={"MY_PR_TOKEN": TOKEN})
    assert other.returncode == 0, other.stderr


def test_read_only_token_names_the_permission_and_the_fork_safe_setup(gpuemu_bin, results, server):
    server.force_status["POST"] = (403, {"message": "Resource not accessible by integration",
                                         "documentation_url": "https://docs.github.com/rest"})
    proc = publish(gpuemu_bin, results, server, "first")
    assert proc.returncode == 3
    assert "HTTP 403: Resource not accessible by integration" in proc.stderr
    assert "permissions: pull-requests: write" in proc.stderr and "workflow_run" in proc.stderr
    assert TOKEN not in proc.stderr


def test_failed_post_is_not_repeated(gpuemu_bin, results, server):
    # A POST that failed with 5xx may still have created the review: sending it again could post twice.
    server.force_status["POST"] = (502, {"message": "Server Error"})
    proc = publish(gpuemu_bin, results, server, "first")
    assert proc.returncode == 3
    assert [w["method"] for w in server.writes()] == ["POST"]
    assert "HTTP 502: Server Error after 1 attempt(s)" in proc.stderr and "re-run later" in proc.stderr


def test_rate_limit_says_when_it_resets(gpuemu_bin, results, server):
    server.force_status["GET"] = (403, {"message": "API rate limit exceeded for installation ID 1."})
    # The documented headers of a primary rate limit.
    server.force_headers = [("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "4102444800")]
    proc = publish(gpuemu_bin, results, server, "first")
    assert proc.returncode == 3
    assert "rate limit of this token is used up" in proc.stderr and "2100-01-01 00:00:00 UTC" in proc.stderr


def test_bad_pr_number_is_a_usage_error(gpuemu_bin, results, server):
    # Each bad --pr's message is a CLI case (tests/cli/cases/ci_publish_pr_*.case); here, that nothing is sent.
    env = clean_env(GITHUB_TOKEN=TOKEN, GITHUB_REPOSITORY=REPO_NAME, GITHUB_API_URL=server.url)
    proc = subprocess.run([str(gpuemu_bin), "ci", "publish", "--pr", "abc", "--result", str(results["first"])],
                          cwd=results["root"], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert server.requests == []


def test_bad_repo_and_unknown_pull_request(gpuemu_bin, results, server):
    # A --repo that is not OWNER/NAME: tests/cli/cases/ci_publish_repo_not_owner_name.case.
    missing = publish(gpuemu_bin, results, server, "first", "--repo", "octo/other")
    assert missing.returncode == 3
    assert "not found (HTTP 404: Not Found)" in missing.stderr and "--repo and --pr" in missing.stderr
