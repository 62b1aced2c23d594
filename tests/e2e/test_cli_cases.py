# Runs every tests/cli/cases/*.case against the real binary and compares its whole stdout and stderr
# with the file's (format and patterns: tests/cli/README.md); a mismatch fails with a unified diff.
"""End-to-end: the CLI's messages and exit codes, one data file per case."""

import dataclasses
import difflib
import re
import shlex
import shutil
from pathlib import Path

import pytest

from e2e_support import REPO

SCRIPTS = REPO / "tests" / "e2e" / "scripts"

CLI = REPO / "tests" / "cli"
CASES = sorted((CLI / "cases").glob("*.case"))

# The patterns of tests/cli/README.md. {{ROOT}} is the project directory, filled in per run.
PATTERNS = {
    "PATH": r"[^\s'\"]+",
    "NUM": r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?",
    "ANY": r".*",
}
PATTERN_MARK = re.compile(r"\{\{([A-Z]+)\}\}")
HEADERS = ("run", "exit", "config", "scripts")


@dataclasses.dataclass
class Case:
    path: Path
    run: list[str]
    exit: int
    config: str | None = None
    scripts: list[str] = dataclasses.field(default_factory=list)
    files: dict[str, str] = dataclasses.field(default_factory=dict)
    stdout: list[str] | None = None
    stderr: list[str] | None = None


def shown(path: Path) -> str:
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def parse_case(path: Path) -> Case:
    """Reads one case file; a malformed one is an error naming the file, the line and what to write."""
    headers: dict[str, str] = {}
    blocks: dict[str, list[str]] = {}
    block = None
    for number, line in enumerate(path.read_text().splitlines(), 1):
        where = f"{shown(path)}:{number}"
        if line.startswith("--- "):
            block = line[4:].strip()
            if block not in ("stdout", "stderr") and not block.startswith("file "):
                raise ValueError(f"{where}: unknown block '{line}': write '--- stdout', '--- stderr' or '--- file NAME'")
            if block in blocks:
                raise ValueError(f"{where}: a second '{line}' block: merge them")
            blocks[block] = []
        elif block is not None:
            blocks[block].append(line)
        elif line.startswith("#") or not line.strip():
            continue
        else:
            key, sep, value = line.partition(":")
            if not sep or key.strip() not in HEADERS:
                raise ValueError(f"{where}: '{line}' is no header: write one of {', '.join(h + ':' for h in HEADERS)}")
            headers[key.strip()] = value.strip()
    name = shown(path)
    for required in ("run", "exit"):
        if required not in headers:
            raise ValueError(f"{name}: no '{required}:' header (tests/cli/README.md)")
    for stream in ("stdout", "stderr"):
        if stream not in blocks:
            raise ValueError(f"{name}: no '--- {stream}' block; an empty block means the stream must be empty")
    argv = shlex.split(headers["run"])
    if not argv or argv[0] != "gpuemu":
        raise ValueError(f"{name}: 'run:' must start with gpuemu, got {headers['run']!r}")
    return Case(path=path, run=argv[1:], exit=int(headers["exit"]), config=headers.get("config"),
                scripts=headers.get("scripts", "").split(), stdout=blocks["stdout"], stderr=blocks["stderr"],
                files={b[5:].strip(): "\n".join(lines) + "\n" for b, lines in blocks.items() if b.startswith("file ")})


def line_pattern(expected: str, root: Path) -> re.Pattern:
    """An expected line as a regular expression that must match a whole output line."""
    parts = []
    last = 0
    for m in PATTERN_MARK.finditer(expected):
        parts.append(re.escape(expected[last:m.start()]))
        name = m.group(1)
        if name == "ROOT":
            parts.append(re.escape(str(root)))
        elif name in PATTERNS:
            parts.append(PATTERNS[name])
        else:
            raise ValueError(f"unknown pattern {{{{{name}}}}} in {expected!r}: use ROOT, PATH, NUM or ANY")
        last = m.end()
    parts.append(re.escape(expected[last:]))
    return re.compile("".join(parts))


def compare(stream: str, expected: list[str], actual: str, root: Path) -> str:
    """'' when every line matches, else a unified diff in which matching lines read as expected."""
    got = actual.splitlines()
    shown = [exp if i < len(got) and line_pattern(exp, root).fullmatch(got[i]) else got[i]
             for i, exp in enumerate(expected[: len(got)])] + got[len(expected):]
    if len(got) == len(expected) and shown == expected:
        return ""
    return "\n".join(difflib.unified_diff(expected, shown, f"expected {stream}", f"actual {stream}", lineterm=""))


def run_case(case: Case, project) -> None:
    """Runs the case in the (empty) project and fails with every difference at once."""
    for name in ("_proto.py", *case.scripts) if case.scripts else ():
        shutil.copy(SCRIPTS / name, project.root / name)
    if case.config:
        (project.root / "gpuemu.toml").write_text((CLI / "configs" / f"{case.config}.toml").read_text())
    for name, text in case.files.items():
        (project.root / name).parent.mkdir(parents=True, exist_ok=True)
        (project.root / name).write_text(text)
    proc = project.run(*case.run)
    problems = []
    if proc.returncode != case.exit:
        problems.append(f"exit code {proc.returncode}, expected {case.exit}")
    problems += [d for d in (compare("stdout", case.stdout, proc.stdout, project.root),
                             compare("stderr", case.stderr, proc.stderr, project.root)) if d]
    assert not problems, f"{shown(case.path)}: gpuemu {shlex.join(case.run)}\n" + "\n".join(problems)


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_cli_case(path, project):
    run_case(parse_case(path), project)


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
