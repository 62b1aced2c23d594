"""End-to-end, without any framework installed: triton_interpret and pallas_interpret reach each op's
own worker (and cold script) as TRITON_INTERPRET / GPUEMU_PALLAS_INTERPRET before the user's module
is imported, one op's choice never leaks into another's, the shell's TRITON_INTERPRET never wins
over the config; and every op's result says where its time went (inside the op, inside the
reference, gpuemu's share), measured by the worker or by gpuemu.script; the op's and the reference's
workers, which run at the same time, share the CPUs between their thread pools.
"""
from __future__ import annotations

import json
import os
import re
import textwrap
from pathlib import Path

import pytest

# The op multiplies by 1 when the variable was "1" at import time, else by 2: the identity
# reference passes it only when it ran under the interpreter.
OPS = textwrap.dedent('''
    import os
    import time

    from gpuemu.frameworks.jax import interpret as pallas_interpret

    TRITON_AT_IMPORT = os.environ.get("TRITON_INTERPRET")

    def triton_op(inputs):
        return inputs["x"] * (1.0 if TRITON_AT_IMPORT == "1" else 2.0)

    def pallas_op(inputs):
        return inputs["x"] * (1.0 if pallas_interpret() else 2.0)

    def slow_op(inputs):
        time.sleep(0.15)
        return inputs["x"]

    def pools_op(inputs):
        # Right (x) only when the thread pools are sized as the test expects ("-": not set).
        names = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
        seen = ",".join(os.environ.get(name, "-") for name in names)
        return inputs["x"] * (1.0 if seen == os.environ["EXPECT_POOLS"] else 2.0)
    ''')

REFS = textwrap.dedent('''
    import time

    def identity(inputs):
        return inputs["x"].astype("float64")

    def slow_identity(inputs):
        time.sleep(0.05)
        return inputs["x"].astype("float64")
    ''')

COLD_OP = textwrap.dedent('''
    import os
    import time
    from gpuemu.script import serve

    def op(inputs):
        time.sleep(0.1)
        return inputs["x"] * (1.0 if os.environ.get("TRITON_INTERPRET") == "1" else 2.0)

    serve(op)
    ''')


def op_table(name, module, extra=""):
    return (f'[[ops]]\nname = "{name}"\n{module}\nreference = "refs_env:identity"\n{extra}\n'
            '[ops.schema]\ndims = { M = [1, 4], N = [1, 16] }\ninputs = { x = ["M", "N"] }\n')


def write(project, validation, ops):
    project.write("")
    (project.root / "ops_env.py").write_text(OPS)
    (project.root / "refs_env.py").write_text(REFS)
    (project.root / "cold_op.py").write_text(COLD_OP)
    (project.root / "gpuemu.toml").write_text(
        f'[project]\nname = "interp"\n\n[validation]\ndtypes = ["float32"]\nseed = 3\ntest_cases = 2\n'
        f'{validation}\n\n' + "\n".join(ops))


def run(project, *args, env=None):
    proc = project.run("--format", "json", "test", *args, env=env)
    return proc, {op["op"]: op for op in json.loads(proc.stdout)["ops"]}


def has_gpu_node() -> bool:
    dev = Path("/dev")
    return (dev / "kfd").exists() or any(re.fullmatch(r"nvidia[0-9]+", p.name) for p in dev.iterdir())


def test_each_op_gets_its_own_interpreter_choice(project):
    write(project, "", [
        op_table("always", 'module = "ops_env:triton_op"', 'triton_interpret = "always"'),
        op_table("never", 'module = "ops_env:triton_op"', 'triton_interpret = "never"'),
        op_table("pallas_always", 'module = "ops_env:pallas_op"', 'pallas_interpret = "always"'),
        op_table("pallas_never", 'module = "ops_env:pallas_op"', 'pallas_interpret = "never"'),
        op_table("cold_always", 'op_script = "cold_op.py"', 'triton_interpret = "always"'),
        op_table("cold_never", 'op_script = "cold_op.py"', 'triton_interpret = "never"'),
    ])
    # The shell says interpret; the config decides per op.
    proc, ops = run(project, "--jobs", "2", env={"TRITON_INTERPRET": "1", "GPUEMU_PALLAS_INTERPRET": "1"})
    assert proc.returncode == 1, proc.stderr
    for name in ("always", "pallas_always", "cold_always"):
        assert ops[name]["passed"] == ops[name]["total"] > 0, (name, ops[name]["failures"][:1])
    for name in ("never", "pallas_never", "cold_never"):
        assert ops[name]["failed"] == ops[name]["total"] > 0, (name, ops[name])


def test_auto_is_the_interpreter_without_a_gpu_and_the_validation_default_applies(project):
    write(project, 'triton_interpret = "never"', [
        op_table("inherits_never", 'module = "ops_env:triton_op"'),
        op_table("auto", 'module = "ops_env:triton_op"', 'triton_interpret = "auto"'),
    ])
    proc, ops = run(project)
    assert ops["inherits_never"]["failed"] > 0, ops["inherits_never"]
    expected_pass = not has_gpu_node()  # no GPU device node: auto is the interpreter, decided in C++
    assert (ops["auto"]["failed"] == 0) == expected_pass, ops["auto"]


def test_every_op_says_where_its_time_went(project):
    write(project, "", [
        op_table("warm", 'module = "ops_env:slow_op"').replace('reference = "refs_env:identity"',
                                                              'reference = "refs_env:slow_identity"'),
        op_table("cold", 'op_script = "cold_op.py"', 'triton_interpret = "always"'),
    ])
    proc = project.run("--format", "json", "test", "--cases", "3")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    ops = {op["op"]: op for op in doc["ops"]}
    warm = ops["warm"]["timing"]
    assert warm["op_secs"] >= 3 * 0.15 and warm["reference_secs"] >= 3 * 0.05, warm
    # The op and the reference ran at the same time: the reference's 50 ms lay inside the op's 150 ms
    # (the workers' called_ns), counted once, so the parts still add up to the wall.
    assert 3 * 0.04 <= warm["overlap_secs"] <= warm["reference_secs"], warm
    assert warm["wall_secs"] >= warm["op_secs"] + warm["reference_secs"] - warm["overlap_secs"]
    assert warm["wall_secs"] < warm["op_secs"] + warm["reference_secs"], warm
    assert warm["gpuemu_secs"] == pytest.approx(
        warm["wall_secs"] - warm["op_secs"] - warm["reference_secs"] + warm["overlap_secs"])
    assert warm["gpuemu_share"] == pytest.approx(warm["gpuemu_secs"] / warm["wall_secs"])
    # A cold script through gpuemu.script reports its function's time; process start-up is gpuemu's.
    cold = ops["cold"]["timing"]
    assert 3 * 0.1 <= cold["op_secs"] < cold["wall_secs"], cold
    assert ops["warm"]["runtime"] == {"framework": "numpy", "version": ops["warm"]["runtime"]["version"],
                                      "device": "cpu"}
    assert doc["timing"]["wall_secs"] == pytest.approx(warm["wall_secs"] + cold["wall_secs"])
    text = project.run("test", "--cases", "3")
    assert re.search(r"     time: [0-9.]+ m?s = op [0-9.]+ m?s \(\d+%\) \+ reference", text.stdout), text.stdout
    assert "     ran: numpy " in text.stdout


def test_one_after_the_other_when_parallel_reference_is_off(project):
    write(project, "", [
        op_table("warm", 'module = "ops_env:slow_op"').replace('reference = "refs_env:identity"',
                                                              'reference = "refs_env:slow_identity"'),
    ])
    proc = project.run("--format", "json", "test", "--cases", "3", env={"GPUEMU_PARALLEL_REFERENCE": "0"})
    assert proc.returncode == 0, proc.stderr
    warm = json.loads(proc.stdout)["ops"][0]["timing"]
    assert warm["overlap_secs"] == 0, warm
    assert warm["wall_secs"] >= warm["op_secs"] + warm["reference_secs"] >= 3 * 0.2, warm
    assert warm["gpuemu_secs"] == pytest.approx(warm["wall_secs"] - warm["op_secs"] - warm["reference_secs"])


def test_the_op_and_the_reference_share_the_cpus_between_their_thread_pools(project):
    pools = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "GOTO_NUM_THREADS")
    if any(os.environ.get(name) for name in pools):
        pytest.skip("this shell sizes a thread pool itself")
    write(project, "", [op_table("pools", 'module = "ops_env:pools_op"')])
    half = str(max(1, len(os.sched_getaffinity(0)) // 2))
    for env in ({"EXPECT_POOLS": ",".join([half] * 3)},
                {"EXPECT_POOLS": "-,-,-", "GPUEMU_PARALLEL_REFERENCE": "0"},
                {"EXPECT_POOLS": "3,-,-", "OMP_NUM_THREADS": "3"}):  # the user's choice stands alone
        proc, ops = run(project, "--cases", "2", env=env)
        failures = ops["pools"]["failures"][:1]
        assert proc.returncode == 0 and ops["pools"]["passed"] == 2, (env, proc.stderr, failures)


def test_ci_run_reports_the_time_split_in_result_json_text_and_job_summary(project, tmp_path):
    # One run, three outputs (issue #18): result.json's per-op timing, the text summary's "time:"
    # line and the Markdown job summary's table (the file in --out and $GITHUB_STEP_SUMMARY).
    write(project, "", [
        op_table("warm", 'module = "ops_env:slow_op"').replace('reference = "refs_env:identity"',
                                                              'reference = "refs_env:slow_identity"'),
        op_table("cold", 'op_script = "cold_op.py"', 'triton_interpret = "always"'),
    ])
    step_summary = tmp_path / "step-summary.md"
    env = {"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(project.root), "GITHUB_STEP_SUMMARY": str(step_summary),
           "GITHUB_OUTPUT": str(tmp_path / "output.txt")}
    proc = project.run("ci", "run", "--iterations", "3", "--seed", "1", "--out", "out", env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = project.root / "out"
    result = json.loads((out / "result.json").read_text())
    text = (out / "summary.txt").read_text()
    markdown = (out / "summary.md").read_text()
    assert "### What ran, and where the time went" in markdown
    assert markdown in step_summary.read_text()
    lines = text.splitlines()
    for op in result["ops"]:
        timing = op["timing"]
        for key in ("op_secs", "reference_secs", "gpuemu_secs", "wall_secs"):
            assert isinstance(timing[key], (int, float)) and timing[key] > 0, (op["op"], timing)
        assert timing["overlap_secs"] >= 0, timing
        assert timing["op_secs"] + timing["reference_secs"] - timing["overlap_secs"] + timing["gpuemu_secs"] == \
            pytest.approx(timing["wall_secs"])
        # Text: the op's result line, then "ran:" and "time:" with all three parts.
        first = next(i for i, line in enumerate(lines) if re.match(rf"(PASS|FAIL) {op['op']}:", line))
        time_line = next(line for line in lines[first + 1:first + 4] if line.startswith("     time: "))
        assert re.fullmatch(r"     time: [0-9.]+ m?s = op [0-9.]+ m?s \(\d+%\) \+ reference [0-9.]+ m?s \(\d+%\) "
                            r"(- both at once [0-9.]+ m?s )?\+ gpuemu [0-9.]+ m?s \(\d+%\)", time_line), time_line
        assert ("both at once" in time_line) == (timing["overlap_secs"] > 0), time_line
        # Markdown: the op's row with wall, op, reference and gpuemu cells.
        section = markdown.split("### What ran, and where the time went", 1)[1]
        row = next(line for line in section.splitlines() if line.startswith(f"| {op['op']} | "))
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert len(cells) == 7 and all(re.fullmatch(r"[0-9.]+ m?s( \(\d+%\))?", c) for c in cells[2:]), row
