"""End-to-end: the command line itself where a check needs logic (two runs compared, JSON read).

What is only a message and an exit code (suggestions, config errors, bad flags) is a data file in
tests/cli/cases/, run by test_cli_cases.py."""
import json

from e2e_support import one_op_toml


def test_version_json(project):
    # The text form is tests/cli/cases/version_text.case.
    project.write(one_op_toml("op_identity.py"), ["op_identity.py", "ref_identity.py"])
    doc = json.loads(project.run("--format", "json", "version").stdout)
    assert doc["name"] == "gpuemu"


def test_global_options_before_or_after_the_command(project):
    project.write(one_op_toml("op_identity.py"), ["op_identity.py", "ref_identity.py"])
    (project.root / "sub").mkdir()
    before = project.run("--config", "gpuemu.toml", "--format", "json", "test", "--cases", "1")
    after = project.run("test", "--cases", "1", "--format", "json", "--config", "gpuemu.toml")
    assert before.returncode == 0 and after.returncode == 0, before.stderr + after.stderr
    ops = [[{k: v for k, v in op.items() if k != "timing"} for op in json.loads(proc.stdout)["ops"]]
           for proc in (before, after)]
    assert ops[0] == ops[1]  # everything but the wall-clock timing


def test_config_found_upward(project):
    project.write(one_op_toml("op_identity.py"), ["op_identity.py", "ref_identity.py"])
    sub = project.root / "a" / "b"
    sub.mkdir(parents=True)
    import subprocess, os
    env = dict(os.environ, GPUEMU_HOME=str(project.home), HOME=str(project.root))
    proc = subprocess.run([str(project.binary), "test", "--cases", "1", "--format", "json"], cwd=sub, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["passed"] is True


def test_json_stdout_is_exactly_one_document(project):
    project.write(one_op_toml("op_off_by_tail.py"), ["op_off_by_tail.py", "ref_identity.py"])
    proc = project.run("fuzz", "--iterations", "5", "--format", "json")
    doc = json.loads(proc.stdout)  # raises if anything else is on stdout
    assert set(doc) >= {"passed", "seed", "ops"}
    assert isinstance(doc["seed"], str)


def test_dtype_and_values_selection(project):
    toml = one_op_toml("op_identity.py").replace('dtypes = ["float32"]', 'dtypes = ["float32", "float16", "bfloat16"]')
    project.write(toml, ["op_identity.py", "ref_identity.py"])
    proc = project.run("fuzz", "--iterations", "4", "--dtype", "float16", "--values", "boundary", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    dtypes = {d["dtype"]: d["total"] for d in doc["ops"][0]["dtypes"]}
    assert dtypes["float16"] == 4 and dtypes["bfloat16"] == 0  # a dtype no op has: dtype_not_in_op.case


def test_seed_above_2_63_round_trips(project):
    project.write(one_op_toml("op_off_by_tail.py"), ["op_off_by_tail.py", "ref_identity.py"])
    proc = project.run("fuzz", "--iterations", "10", "--seed", "18446744073709551615", "--format", "json")
    doc = json.loads(proc.stdout)
    assert doc["seed"] == "18446744073709551615"
    seed = doc["ops"][0]["failures"][0]["seed"]
    again = project.run("reproduce", seed, "--op", "op", "--format", "json")
    assert json.loads(again.stdout)["seed"] == seed


def test_report_render_takes_the_formats_docs_commands_md_lists(project):
    """docs/commands.md: a plain result.json renders as text, json, junit, sarif or markdown (what
    `ci run` wrote, byte for byte); html is for signed reports only and is a usage error here."""
    project.write(one_op_toml("op_identity.py", validation="test_cases = 1"), ["op_identity.py", "ref_identity.py"])
    assert project.run("ci", "run", "-n", "1", "--out", "out").returncode == 0
    files = {"text": "summary.txt", "json": "result.json", "junit": "junit.xml", "sarif": "gpuemu.sarif",
             "markdown": "summary.md"}
    for fmt, name in files.items():
        proc = project.run("--format", fmt, "report", "render", "out/result.json")
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == (project.root / "out" / name).read_text(), fmt
    html = project.run("--format", "html", "report", "render", "out/result.json")
    assert html.returncode == 2
    assert "unknown report format 'html'" in html.stderr and "markdown" in html.stderr
