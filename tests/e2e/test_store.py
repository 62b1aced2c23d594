"""End-to-end: results that last — the store, reproduce from it, minimize, calibrate, baselines,
kill -9 durability and two writers at once, all through the real binary and a real SQLite file."""
import json
import os
import random
import signal
import sqlite3
import subprocess
import time

from e2e_support import REPO, one_op_toml


def fuzz(project, *args):
    proc = project.run("fuzz", "--format", "json", *args)
    return proc, json.loads(proc.stdout)


def db_path(project):
    return project.home / "db" / "gpuemu.db"


def test_failures_are_stored_newest_first_and_shown(project):
    project.write(one_op_toml("op_off_by_tail.py"), ["op_off_by_tail.py", "ref_identity.py"])
    proc, doc = fuzz(project, "--iterations", "12")
    assert proc.returncode == 1
    reported = [f["seed"] for f in doc["ops"][0]["failures"]]
    assert reported and db_path(project).exists()
    listed = json.loads(project.run("failures", "--format", "json", "--limit", "0").stdout)["failures"]
    assert [f["seed"] for f in listed] == list(reversed(reported))
    for f in listed:
        assert set(f) >= {"seed", "op", "kind", "dtype", "shapes"} and f["op"] == "op" and f["kind"] == "mismatch"
    show = project.run("show", reported[0], "--format", "json")
    assert show.returncode == 0
    shown = json.loads(show.stdout)
    assert shown["seed"] == reported[0] and shown["snapshot"]["x"]["shape"] == doc["ops"][0]["failures"][0]["shapes"]["x"]
    results = json.loads(project.run("results", "--format", "json").stdout)["results"]
    assert results[0]["op"] == "op" and results[0]["failed"] == len(reported)
    assert project.run("results", "--since", "1h").returncode == 0
    assert project.run("results", "--since", "yesterday-ish").returncode == 2


def test_reproduce_from_store_without_op_and_after_config_change(project):
    project.write(one_op_toml("op_off_by_tail.py"), ["op_off_by_tail.py", "ref_identity.py"])
    _, doc = fuzz(project, "--iterations", "12")
    failure = doc["ops"][0]["failures"][0]
    again = project.run("reproduce", failure["seed"], "--format", "json")
    assert again.returncode == 1, again.stderr
    replay = json.loads(again.stdout)
    assert replay["shapes"] == failure["shapes"] and replay["max_abs"] == failure["max_abs"]
    assert replay["from_snapshot"] is False
    # Change the config: the digest differs, so the case replays from the stored snapshot.
    toml = (project.root / "gpuemu.toml").read_text().replace("N = [1, 70]", "N = [1, 90]")
    (project.root / "gpuemu.toml").write_text(toml)
    changed = project.run("reproduce", failure["seed"], "--format", "json")
    assert changed.returncode == 1
    assert "config changed" in changed.stderr
    replay = json.loads(changed.stdout)
    assert replay["from_snapshot"] is True and replay["shapes"] == failure["shapes"]
    assert replay["max_abs"] == failure["max_abs"]


def test_corrupt_database_is_refused_and_untouched(project):
    project.write(one_op_toml("op_identity.py"), ["op_identity.py", "ref_identity.py"])
    db = db_path(project)
    db.parent.mkdir(parents=True)
    garbage = os.urandom(8192)
    db.write_bytes(garbage)
    proc = project.run("fuzz", "--iterations", "1")
    assert proc.returncode == 3
    assert str(db) in proc.stderr
    assert db.read_bytes() == garbage


def example_project(project):
    """The bundled examples, run from a copy so the repo's files are never written."""
    import shutil
    shutil.copytree(REPO / "examples", project.root / "ex", ignore=shutil.ignore_patterns("__pycache__"))
    project.root = project.root / "ex"
    return project


def first_failure(project, op, dtype="float32"):
    proc = project.run("fuzz", "--op", op, "--dtype", dtype, "--iterations", "40", "--fail-fast", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    return json.loads(proc.stdout)["ops"][0]["failures"][0]


def test_minimize_softmax_tail_bug_to_block_edge(project):
    example_project(project)
    failure = first_failure(project, "softmax_tail_bug")
    proc = project.run("minimize", failure["seed"], "--format", "json", "--max-iters", "120")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["kind"] == failure["kind"] and doc["steps"] >= 1
    m, n = doc["minimized"]["shapes"]["x"]
    assert m == 1
    assert n < 32 or n % 32 in (1, 2), n  # below the block, or just past a multiple of it
    assert doc["original"]["seed"] == failure["seed"]
    # The minimized case is stored, linked, and replays from the store.
    again = project.run("reproduce", doc["minimized"]["seed"], "--format", "json")
    assert again.returncode == 1 and json.loads(again.stdout)["shapes"]["x"] == [m, n]
    shown = json.loads(project.run("show", failure["seed"], "--format", "json").stdout)
    assert shown["minimized"][0]["seed"] == doc["minimized"]["seed"]


def test_minimize_matmul_acc_bug_to_k_just_above_block(project):
    example_project(project)
    failure = first_failure(project, "matmul_acc_bug")
    proc = project.run("minimize", failure["seed"], "--strategy", "dims", "--format", "json", "--max-iters", "150")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    (m, k), (k2, n) = doc["minimized"]["shapes"]["a"], doc["minimized"]["shapes"]["b"]
    assert k == k2 and 32 < k <= 34 and m == 1 and n == 1, doc["minimized"]
    assert doc["attempts"] <= 150


def test_calibrate_prints_and_writes_keeping_comments(project):
    toml = one_op_toml("op_identity.py") + "\n# a comment that must survive\n"
    project.write(toml.replace("[[ops]]", "# ops below\n[[ops]]"), ["op_identity.py", "ref_identity.py"])
    proc = project.run("calibrate", "op", "--iterations", "4", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    # 4 cases spread over the 3 value kinds: 2 each; the re-check ran as many fresh ones.
    assert doc["dtypes"][0]["dtype"] == "float32" and doc["dtypes"][0]["cases"] == 6
    assert doc["dtypes"][0]["check"]["cases"] == 6 and doc["dtypes"][0]["check"]["passed"] and doc["checked"]
    before = (project.root / "gpuemu.toml").read_text()
    wrote = project.run("calibrate", "op", "--iterations", "4", "--write")
    assert wrote.returncode == 0, wrote.stderr
    after = (project.root / "gpuemu.toml").read_text()
    assert "# a comment that must survive" in after and "# ops below" in after
    assert "[ops.tolerances]" in after and "float32 = { atol = " in after
    assert after.startswith(before.split("[[ops]]")[0])
    assert project.run("test", "--cases", "1").returncode == 0  # the file still loads


def test_baseline_store_compare_export_import_and_regression(project):
    project.write(one_op_toml("op_identity.py"), ["op_identity.py", "op_off_by_tail.py", "ref_identity.py"])
    assert project.run("fuzz", "--iterations", "10").returncode == 0
    assert project.run("baseline", "store", "main").returncode == 0
    same = project.run("baseline", "compare", "main", "--format", "json")
    assert same.returncode == 0 and json.loads(same.stdout)["regressions"] == []
    exported = project.root / "baseline.json"
    assert project.run("baseline", "export", "main", str(exported)).returncode == 0
    doc = json.loads(exported.read_text())
    assert doc["schema_version"] == 1 and doc["kind"] == "gpuemu-baseline"
    assert project.run("baseline", "import", str(exported), "--tag", "imported").returncode == 0
    # Break the kernel: the op passed in the baseline and fails now.
    toml = (project.root / "gpuemu.toml").read_text().replace("op_identity.py", "op_off_by_tail.py")
    (project.root / "gpuemu.toml").write_text(toml)
    assert project.run("fuzz", "--iterations", "10").returncode == 1
    regressed = project.run("baseline", "compare", "imported", "--format", "json")
    assert regressed.returncode == 1
    assert json.loads(regressed.stdout)["regressions"][0]["op"] == "op"
    relaxed = project.run("baseline", "compare", str(exported))
    assert relaxed.returncode == 1 and "REGRESSION" in relaxed.stdout


def test_kill_9_loses_nothing_reported_stored(project):
    project.write(one_op_toml("op_off_by_tail.py"), ["op_off_by_tail.py", "ref_identity.py"])
    rng = random.Random(4)
    env = dict(os.environ, GPUEMU_HOME=str(project.home), HOME=str(project.root))
    reported = set()
    for attempt in range(6):
        proc = subprocess.Popen([str(project.binary), "-v", "fuzz", "--iterations", "200", "--seed", str(attempt + 1)],
                                cwd=project.root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(rng.uniform(0.5, 3.0))
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate()
        reported |= {line.split()[2] for line in err.splitlines() if line.startswith("stored failure ")}
        with sqlite3.connect(db_path(project)) as con:
            assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert reported, "no failure was stored before the kills; give the runs more time"
    listed = json.loads(project.run("failures", "--format", "json", "--limit", "0").stdout)["failures"]
    assert reported <= {f["seed"] for f in listed}


def test_two_processes_fuzz_into_one_database(project):
    project.write(one_op_toml("op_off_by_tail.py"), ["op_off_by_tail.py", "ref_identity.py"])
    env = dict(os.environ, GPUEMU_HOME=str(project.home), HOME=str(project.root))
    procs = [subprocess.Popen([str(project.binary), "fuzz", "--iterations", "25", "--seed", str(s), "--format", "json"],
                              cwd=project.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for s in (11, 12)]
    seeds = set()
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 1, err
        assert "locked" not in err
        seeds |= {f["seed"] for f in json.loads(out)["ops"][0]["failures"]}
    listed = json.loads(project.run("failures", "--format", "json", "--limit", "0").stdout)["failures"]
    assert seeds == {f["seed"] for f in listed}
