"""Batched Triton launches (python/gpuemu/frameworks/_triton_batch.py, issue 39): the same outputs and
failures as one program at a time, for the examples, the sanitizer's kernels and Liger-Kernel's ops;
control flow that depends on the program id splits a group (its writes undone) or runs one at a time,
said once per kernel; atomics apply every lane; a million-program grid runs in seconds."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from e2e_support import REPO

HERE = os.path.dirname(os.path.abspath(__file__))
pytest.importorskip("triton")


def run(script: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "python"), os.environ.get("PYTHONPATH", "")])}
    env.pop("GPUEMU_TRITON_BATCH", None)
    return subprocess.run([sys.executable, os.path.join(HERE, script), *args], env=env, capture_output=True,
                          text=True, timeout=600, cwd=str(REPO))


def test_both_paths_give_the_same_outputs_and_failures():
    proc = run("triton_both_paths.py", "--quick")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert " 0 differ" in proc.stdout
    # The cross-entropy kernel branches on its row's target (ignore_index): split, said once.
    notes = [line for line in proc.stderr.splitlines() if "note: Triton kernel 'liger_cross_entropy_kernel'" in line]
    assert len(notes) == 1 and "cross_entropy.py:" in notes[0] and "groups that agree" in notes[0], proc.stderr[-3000:]


@pytest.fixture(scope="module")
def scenarios():
    proc = run("triton_batch_scenarios.py")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    found = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            entry = json.loads(line)
            found[entry.pop("scenario")] = entry
    return found, proc.stderr


def test_a_branch_on_the_program_id_splits_the_group_and_undoes_its_writes(scenarios):
    found, err = scenarios
    assert found["split_undo"]["right"], "the atomic before the branch counted once per program"
    assert sum("'count_then_branch'" in line for line in err.splitlines()) == 1
    assert "triton_batch_scenarios.py:" in err and "groups that agree" in err


def test_a_loop_bound_from_the_program_id_runs_one_program_at_a_time(scenarios):
    found, err = scenarios
    assert found["one_at_a_time"] == {"right": True, "remembered": True}
    line = next(line for line in err.splitlines() if "'loop_over_own_row'" in line)
    assert "loop bound" in line and "one at a time" in line and "triton_batch_scenarios.py:" in line


def test_an_operation_without_a_batched_version_runs_one_program_at_a_time(scenarios):
    found, err = scenarios
    assert found["unbatchable"]["right"]
    assert "'printing'" in err and "tl.print" in err and "no batched version" in err


def test_atomics_of_every_program_are_applied(scenarios):
    found, _ = scenarios
    assert found["atomics_all_applied"]["right"]


def test_a_million_programs_run_in_seconds(scenarios):
    found, _ = scenarios
    assert found["million_programs"]["right"] and found["million_programs"]["seconds"] < 30


def test_a_launch_that_runs_long_says_which_kernel_line_it_is_at(scenarios):
    # A kernel that never ends is stopped by the case timeout (the worker is killed): its stderr tail then
    # holds this note, naming the kernel and the line it is stuck on.
    found, err = scenarios
    assert found["long_launch_names_its_line"]["right"]
    line = next(line for line in err.splitlines() if "'long_loop'" in line)
    assert "has run for 0.3 s" in line and "triton_batch_scenarios.py:" in line and "case's timeout" in line
