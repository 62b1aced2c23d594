# The CLI case format of tests/cli/README.md: reading a .case file, matching its expected lines against
# a run's output, running it against the real binary, and rewriting its expectations (--update).
"""CLI cases as data: parse, run, compare, rewrite (tests/cli/README.md)."""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import re
import shlex
import shutil
from pathlib import Path

from e2e_support import REPO

SCRIPTS = REPO / "tests" / "e2e" / "scripts"
KERNELS = REPO / "tests" / "kernels"
CLI = REPO / "tests" / "cli"
CASES = sorted((CLI / "cases").glob("*.case"))

# The patterns of tests/cli/README.md. {{ROOT}} is the project directory, filled in per run.
PATTERNS = {
    "PATH": r"[^\s'\"]+",
    "NUM": r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?",
    "ANY": r".*",
}
PATTERN_MARK = re.compile(r"\{\{([A-Z]+)\}\}")
HEADERS = ("run", "exit", "config", "scripts", "kernels", "env", "setup", "cleanup", "server")
REPEATABLE = ("setup", "cleanup")
# A setup command may fail the way a run does (1: a check failed) but not as a usage (2) or
# internal (3) error: that is a broken case, not the state it wants to set up.
SETUP_EXITS = (0, 1)
# Servers a case may start on 127.0.0.1 for its commands (`server: NAME`); {{SERVER}} in a command line is
# the server's URL, and the environment gets what a real user of that server would set.
GITHUB_PR = {"repo": "octo/kernels", "number": 1, "head": "c" * 40, "token": "case-token"}


@contextlib.contextmanager
def started_server(name: str | None, where: str):
    """Yields (url, environment) of the named server for the case's duration, or (None, {})."""
    if name is None:
        yield None, {}
    elif name == "github_pr":
        # lazy: only the cases that review a pull request need the GitHub-API-shaped server
        from github_pr_server import PullRequestServer

        with PullRequestServer(GITHUB_PR["repo"], GITHUB_PR["number"], GITHUB_PR["head"], [],
                               GITHUB_PR["token"]) as server:
            yield server.url, {"GITHUB_TOKEN": GITHUB_PR["token"], "GITHUB_REPOSITORY": GITHUB_PR["repo"]}
    else:
        raise ValueError(f"{where}: unknown server '{name}': the only one is github_pr")


@dataclasses.dataclass
class Case:
    path: Path
    run: list[str]
    exit: int
    config: str | None = None
    scripts: list[str] = dataclasses.field(default_factory=list)
    setup: list[list[str]] = dataclasses.field(default_factory=list)
    cleanup: list[list[str]] = dataclasses.field(default_factory=list)
    server: str | None = None
    kernels: list[str] = dataclasses.field(default_factory=list)
    env: dict[str, str] = dataclasses.field(default_factory=dict)
    files: dict[str, str] = dataclasses.field(default_factory=dict)
    stdout: list[str] | None = None
    stderr: list[str] | None = None


@dataclasses.dataclass
class Outcome:
    """What the case's run: line did (setup and cleanup output is not part of it)."""

    exit: int
    stdout: str
    stderr: str


def shown(path: Path) -> str:
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def gpuemu_argv(text: str, where: str) -> list[str]:
    argv = shlex.split(text)
    if not argv or argv[0] != "gpuemu":
        raise ValueError(f"{where}: a command must start with gpuemu, got {text!r}")
    return argv[1:]


def parse_case(path: Path) -> Case:
    """Reads one case file; a malformed one is an error naming the file, the line and what to write."""
    headers: dict[str, str] = {}
    repeated: dict[str, list[list[str]]] = {name: [] for name in REPEATABLE}
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
            key = key.strip()
            if not sep or key not in HEADERS:
                raise ValueError(f"{where}: '{line}' is no header: write one of {', '.join(h + ':' for h in HEADERS)}")
            if key in REPEATABLE:
                repeated[key].append(gpuemu_argv(value.strip(), where))
            elif key in headers:
                raise ValueError(f"{where}: a second '{key}:' header: a case has one")
            else:
                headers[key] = value.strip()
    name = shown(path)
    for required in ("run", "exit"):
        if required not in headers:
            raise ValueError(f"{name}: no '{required}:' header (tests/cli/README.md)")
    for stream in ("stdout", "stderr"):
        if stream not in blocks:
            raise ValueError(f"{name}: no '--- {stream}' block; an empty block means the stream must be empty")
    env = {}
    for word in shlex.split(headers.get("env", "")):
        key, sep, value = word.partition("=")
        if not sep or not key:
            raise ValueError(f"{name}: 'env:' takes NAME=VALUE words, got {word!r}")
        env[key] = value
    return Case(path=path, run=gpuemu_argv(headers["run"], f"{name}: 'run:'"), exit=int(headers["exit"]),
                config=headers.get("config"), scripts=headers.get("scripts", "").split(),
                kernels=headers.get("kernels", "").split(), env=env,
                setup=repeated["setup"], cleanup=repeated["cleanup"], server=headers.get("server"), stdout=blocks["stdout"],
                stderr=blocks["stderr"],
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


def merged_lines(expected: list[str], actual: str, root: Path) -> list[str]:
    """The actual lines, each written as its expected line where that line still matches it: the
    patterns of a case survive a rewrite, and only what really changed is new."""
    got = actual.splitlines()
    return [exp if i < len(expected) and line_pattern(exp, root).fullmatch(line) else line
            for i, (exp, line) in enumerate(zip(expected + [""] * len(got), got))]


def compare(stream: str, expected: list[str], actual: str, root: Path) -> str:
    """'' when every line matches, else a unified diff in which matching lines read as expected."""
    shown_lines = merged_lines(expected, actual, root)
    if shown_lines == expected:
        return ""
    return "\n".join(difflib.unified_diff(expected, shown_lines, f"expected {stream}", f"actual {stream}",
                                          lineterm=""))


def with_server(argv: list[str], url: str | None) -> list[str]:
    return [word.replace("{{SERVER}}", url) for word in argv] if url else argv


def prepare(case: Case, project, url: str | None = None, env: dict | None = None) -> None:
    """Writes the case's scripts, config and files into the (empty) project and runs its setup lines."""
    for name in ("_proto.py", *case.scripts) if case.scripts else ():
        shutil.copy(SCRIPTS / name, project.root / name)
    if case.kernels:
        (project.root / "kernels").mkdir(exist_ok=True)
    for name in case.kernels:
        shutil.copy(KERNELS / name, project.root / "kernels" / name)
    if case.config:
        (project.root / "gpuemu.toml").write_text((CLI / "configs" / f"{case.config}.toml").read_text())
    for name, text in case.files.items():
        (project.root / name).parent.mkdir(parents=True, exist_ok=True)
        (project.root / name).write_text(text)
    for argv in case.setup:
        proc = project.run(*with_server(argv, url), env=env)
        if proc.returncode not in SETUP_EXITS:
            raise AssertionError(f"{shown(case.path)}: setup 'gpuemu {shlex.join(argv)}' exited with "
                                 f"{proc.returncode}:\n{proc.stderr}")


def execute(case: Case, project) -> Outcome:
    """Runs the case (setup, run, then cleanup whatever happened) and returns what run: did."""
    with started_server(case.server, shown(case.path)) as (url, server_env):
        env = {**server_env, **case.env}
        prepare(case, project, url, env)
        try:
            proc = project.run(*with_server(case.run, url), env=env)
        finally:
            for argv in case.cleanup:
                project.run(*with_server(argv, url), env=env)
    return Outcome(proc.returncode, proc.stdout, proc.stderr)


def problems_of(case: Case, outcome: Outcome, root: Path) -> list[str]:
    problems = []
    if outcome.exit != case.exit:
        problems.append(f"exit code {outcome.exit}, expected {case.exit}")
    problems += [d for d in (compare("stdout", case.stdout, outcome.stdout, root),
                             compare("stderr", case.stderr, outcome.stderr, root)) if d]
    return problems


def run_case(case: Case, project) -> None:
    """Runs the case in the (empty) project and fails with every difference at once."""
    problems = problems_of(case, execute(case, project), project.root)
    assert not problems, f"{shown(case.path)}: gpuemu {shlex.join(case.run)}\n" + "\n".join(problems)


def rewritten(case: Case, outcome: Outcome, root: Path) -> str:
    """The case file with its exit code and output blocks set to what the run did (--update): comments,
    headers and files stay; a line that still matches keeps its patterns; the project directory in a
    new line becomes {{ROOT}}. Numbers that vary between runs must then be made {{NUM}} by hand."""
    new_blocks = {}
    for stream, expected, actual in (("stdout", case.stdout, outcome.stdout),
                                     ("stderr", case.stderr, outcome.stderr)):
        lines = [line.replace(str(root), "{{ROOT}}") for line in merged_lines(expected, actual, root)]
        bad = [line for line in lines if line.startswith("--- ")]
        if bad:
            raise ValueError(f"{shown(case.path)}: {stream} has a line starting with '--- ' ({bad[0]!r}), "
                             "which a case cannot hold: check that output from Python instead")
        new_blocks[stream] = lines
    out: list[str] = []
    skipping = False
    for line in case.path.read_text().splitlines():
        if line.startswith("--- "):
            block = line[4:].strip()
            skipping = block in new_blocks
            out.append(line)
            if skipping:
                out.extend(new_blocks[block])
            continue
        if skipping:
            continue
        if line.partition(":")[0].strip() == "exit" and not line.startswith("#"):
            line = f"exit: {outcome.exit}"
        out.append(line)
    return "\n".join(out) + "\n"
