"""End-to-end: the command line itself — global options anywhere, suggestions, config errors, exit codes."""
import json

from e2e_support import one_op_toml


def test_version_text_and_json(project):
    project.write(one_op_toml("op_identity.py"), ["op_identity.py", "ref_identity.py"])
    text = project.run("version")
    assert text.returncode == 0 and text.stdout.startswith("gpuemu ")
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


def test_unknown_command_suggests(project):
    proc = project.run("fuzzz")
    assert proc.returncode == 2
    assert "did you mean 'fuzz'" in proc.stderr


def test_unknown_flag_suggests(project):
    project.write(one_op_toml("op_identity.py"), ["op_identity.py", "ref_identity.py"])
    proc = project.run("fuzz", "--iteration", "3")
    assert proc.returncode == 2
    assert "--iterations" in proc.stderr


def test_unknown_op_suggests(project):
    project.write(one_op_toml("op_identity.py"), ["op_identity.py", "ref_identity.py"])
    proc = project.run("fuzz", "--op", "oq")
    assert proc.returncode == 2
    assert "did you mean 'op'" in proc.stderr


def test_config_error_has_file_line_column_and_exit_2(project):
    toml = one_op_toml("op_identity.py").replace('seed = 7', 'seed = 7\nchek_nan = true')
    project.write(toml, ["op_identity.py", "ref_identity.py"])
    proc = project.run("test")
    assert proc.returncode == 2
    assert "gpuemu.toml:" in proc.stderr and "chek_nan" in proc.stderr
    assert "check_nan" in proc.stderr  # the suggestion
    assert proc.stdout == ""


def test_missing_script_is_config_error(project):
    project.write(one_op_toml("nope.py"), ["ref_identity.py"])
    proc = project.run("test")
    assert proc.returncode == 2
    assert "nope.py" in proc.stderr


def test_bad_seed_is_usage_error(project):
    project.write(one_op_toml("op_identity.py"), ["op_identity.py", "ref_identity.py"])
    proc = project.run("fuzz", "--seed", "-4")
    assert proc.returncode == 2
    assert "seed" in proc.stderr


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
    assert dtypes["float16"] == 4 and dtypes["bfloat16"] == 0
    bad = project.run("fuzz", "--dtype", "float64")
    assert bad.returncode == 2 and "float64" in bad.stderr


def test_seed_above_2_63_round_trips(project):
    project.write(one_op_toml("op_off_by_tail.py"), ["op_off_by_tail.py", "ref_identity.py"])
    proc = project.run("fuzz", "--iterations", "10", "--seed", "18446744073709551615", "--format", "json")
    doc = json.loads(proc.stdout)
    assert doc["seed"] == "18446744073709551615"
    seed = doc["ops"][0]["failures"][0]["seed"]
    again = project.run("reproduce", seed, "--op", "op", "--format", "json")
    assert json.loads(again.stdout)["seed"] == seed


def test_test_exits_one_on_failure(project):
    project.write(one_op_toml("op_crash.py"), ["op_crash.py", "ref_identity.py"])
    proc = project.run("test", "--cases", "1")
    assert proc.returncode == 1


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
