"""Progress on stderr in a CI log (stderr is a pipe, not a terminal): plain lines, few of them, never
a carriage return or an ANSI escape code (a CI log would otherwise get one 10 KB line)."""
import json
import time

from e2e_support import one_op_toml


def plain(stderr: str):
    assert "\r" not in stderr and "\x1b" not in stderr, repr(stderr[:300])


def test_fuzz_progress_in_a_log_is_plain_and_sparse(project):
    project.write(one_op_toml("op_identity.py"), ["op_identity.py", "ref_identity.py"])
    started = time.monotonic()
    proc = project.run("fuzz", "-n", "40")
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    plain(proc.stderr)
    progress = [line for line in proc.stderr.splitlines() if " cases, " in line and "not passed" in line]
    # One line per finished op, and between those at most one per 10 s.
    assert progress[-1] == "fuzz op: 40/40 cases, 0 not passed"
    assert len(progress) <= 1 + int(elapsed // 10), progress


def test_minimize_progress_in_a_log_is_plain_and_sparse(project):
    project.write(one_op_toml("op_off_by_tail.py"), ["op_off_by_tail.py", "ref_identity.py"])
    fuzz = project.run("--format", "json", "fuzz", "-n", "12")
    assert fuzz.returncode == 1, fuzz.stderr
    # A random case, not a corner: the corners are minimal already and leave nothing to shrink.
    seed = next(f["seed"] for f in json.loads(fuzz.stdout)["ops"][0]["failures"] if not f.get("corner"))
    proc = project.run("minimize", seed, "--strategy", "dims", "--max-iters", "30")
    plain(proc.stderr)
    status = [line for line in proc.stderr.splitlines() if line.startswith("minimize: ")]
    # The first state at once, then at most one line per 10 s, and the final state: a short run
    # prints one or two lines, not one per attempt.
    assert 1 <= len(status) <= 2, status
