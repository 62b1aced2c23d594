# Runs every tests/cli/cases/*.case against the real binary and compares its whole stdout and stderr
# with the file's (format and patterns: tests/cli/README.md); a mismatch fails with a unified diff.
"""End-to-end: the CLI's messages and exit codes, one data file per case.

``pytest tests/e2e/test_cli_cases.py --update`` rewrites each case's exit code and output blocks to what
the binary does now (a line that still matches keeps its patterns); review the diff before committing.
"""

import pytest

from cli_cases import CASES, CLI, Outcome, compare, execute, line_pattern, parse_case, problems_of, rewritten, \
    run_case, shown

@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_cli_case(path, project, request):
    case = parse_case(path)
    if not request.config.getoption("--update"):
        run_case(case, project)
        return
    outcome = execute(case, project)
    if problems_of(case, outcome, project.root):
        path.write_text(rewritten(case, outcome, project.root))
        pytest.skip(f"{shown(path)} rewritten (--update): review its diff")


def test_there_are_cases():
    assert len(CASES) >= 10


def test_a_wrong_expected_output_fails_with_a_diff(project):
    # The runner itself can fail: this case expects a message the binary does not print.
    with pytest.raises(AssertionError) as failure:
        run_case(parse_case(CLI / "selftest" / "wrong_stderr.case"), project)
    message = str(failure.value)
    assert "-gpuemu: unknown command 'fuzzz' (did you mean 'fuzzy'?)" in message
    assert "+gpuemu: unknown command 'fuzzz' (did you mean 'fuzz'?)" in message


def test_a_wrong_exit_code_fails(project):
    case = parse_case(CLI / "selftest" / "wrong_stderr.case")
    case.exit = 0
    case.stderr = ["gpuemu: unknown command 'fuzzz' (did you mean 'fuzz'?); run 'gpuemu --help' for the list"]
    with pytest.raises(AssertionError, match="exit code 2, expected 0"):
        run_case(case, project)


def test_patterns_match_what_they_say_and_no_more(tmp_path):
    assert line_pattern("took {{NUM}} s", tmp_path).fullmatch("took 0.25 s")
    assert line_pattern("took {{NUM}} s", tmp_path).fullmatch("took 1e-05 s")
    assert not line_pattern("took {{NUM}} s", tmp_path).fullmatch("took many s")
    assert line_pattern("in {{PATH}}: x", tmp_path).fullmatch("in /a/b.toml: x")
    assert not line_pattern("in {{PATH}}: x", tmp_path).fullmatch("in /a b: x")
    assert line_pattern("at {{ROOT}}/gpuemu.toml", tmp_path).fullmatch(f"at {tmp_path}/gpuemu.toml")
    assert not line_pattern("at {{ROOT}}/gpuemu.toml", tmp_path).fullmatch("at /elsewhere/gpuemu.toml")
    assert line_pattern("a (b) {{ANY}}", tmp_path).fullmatch("a (b) anything at all")
    assert not line_pattern("a (b)", tmp_path).fullmatch("a (b) and more")
    with pytest.raises(ValueError, match="unknown pattern"):
        line_pattern("{{TIME}}", tmp_path)


def test_a_stream_with_more_or_fewer_lines_differs(tmp_path):
    assert compare("stdout", ["a"], "a\n", tmp_path) == ""
    assert "+b" in compare("stdout", ["a"], "a\nb\n", tmp_path)
    assert "-b" in compare("stdout", ["a", "b"], "a\n", tmp_path)
    assert compare("stdout", [], "", tmp_path) == ""
    assert "+x" in compare("stdout", [], "x\n", tmp_path)


def test_a_malformed_case_names_its_line(tmp_path):
    bad = tmp_path / "bad.case"
    bad.write_text("run: gpuemu version\nexits: 0\n--- stdout\n--- stderr\n")
    with pytest.raises(ValueError, match=r"bad.case:2: 'exits: 0' is no header"):
        parse_case(bad)


def test_setup_lines_run_first_and_cleanup_runs_even_when_the_case_fails(project, tmp_path):
    case_file = tmp_path / "setup.case"
    case_file.write_text("setup: gpuemu keygen --out k\nrun: gpuemu keygen --out k\ncleanup: gpuemu version\n"
                         "exit: 0\n--- stdout\n--- stderr\n")
    case = parse_case(case_file)
    assert case.setup == [["keygen", "--out", "k"]] and case.cleanup == [["version"]]
    outcome = execute(case, project)
    # keygen refuses to overwrite the pair the setup line wrote: the run saw the setup's state.
    assert outcome.exit == 2 and "k/gpuemu.key" in outcome.stderr


def test_a_setup_line_that_fails_as_usage_breaks_the_case(project, tmp_path):
    case_file = tmp_path / "bad_setup.case"
    case_file.write_text("setup: gpuemu fuzz --seed -1\nrun: gpuemu version\nexit: 0\n--- stdout\n--- stderr\n")
    with pytest.raises(AssertionError, match=r"setup 'gpuemu fuzz --seed -1' exited with 2"):
        execute(parse_case(case_file), project)


def test_update_rewrites_exit_and_output_and_keeps_what_still_matches(tmp_path):
    case_file = tmp_path / "x.case"
    case_file.write_text("# why\nrun: gpuemu version\nexit: 3\n--- file a.txt\nkept\n--- stdout\n"
                         "took {{NUM}} s\nold line\n--- stderr\ngone\n")
    case = parse_case(case_file)
    outcome = Outcome(0, f"took 0.5 s\nnew line in {tmp_path}/p\n", "")
    text = rewritten(case, outcome, tmp_path)
    assert text == ("# why\nrun: gpuemu version\nexit: 0\n--- file a.txt\nkept\n--- stdout\ntook {{NUM}} s\n"
                    "new line in {{ROOT}}/p\n--- stderr\n")
    case_file.write_text(text)
    assert not problems_of(parse_case(case_file), outcome, tmp_path)


def test_update_refuses_output_a_case_cannot_hold(tmp_path):
    case_file = tmp_path / "x.case"
    case_file.write_text("run: gpuemu version\nexit: 0\n--- stdout\n--- stderr\n")
    with pytest.raises(ValueError, match="starting with '--- '"):
        rewritten(parse_case(case_file), Outcome(0, "--- a\n", ""), tmp_path)
