# Binds tests/cli/cases/ to the command table (src/cli/commands.def): every command has a case for its
# help, one for a usage error (exit 2) and one that succeeds (exit 0, or 1 where the command reports findings).
"""Every command of commands.def is covered by CLI cases: its help, a usage error and one success."""

import re

import pytest

from cli_cases import CASES, parse_case
from e2e_support import REPO

COMMAND_ROW = re.compile(r'^GPUEMU_COMMAND\(\s*\w+\s*,\s*"([^"]+)"', re.M)
COMMANDS = COMMAND_ROW.findall((REPO / "src" / "cli" / "commands.def").read_text())
# Global flags (cli/cli.cpp) that may stand before the command; the ones listed with a value take one.
GLOBAL_WITH_VALUE = {"--config", "--format"}
GLOBAL_FLAGS = {"-v", "--verbose", "-q", "--quiet", "--no-store", "--daemon"}


def command_of(argv: list[str]) -> tuple[str | None, list[str]]:
    """The command path a case runs (the longest of COMMANDS its words start with) and its arguments."""
    words = list(argv)
    while words and (words[0] in GLOBAL_FLAGS or words[0] in GLOBAL_WITH_VALUE or
                     words[0].split("=")[0] in GLOBAL_WITH_VALUE):
        takes_value = words[0] in GLOBAL_WITH_VALUE
        words = words[2:] if takes_value else words[1:]
    for path in sorted(COMMANDS, key=lambda p: -len(p.split())):
        n = len(path.split())
        if words[:n] == path.split():
            return path, words[n:]
    return None, words


def coverage() -> dict[str, set[str]]:
    kinds: dict[str, set[str]] = {path: set() for path in COMMANDS}
    for case_path in CASES:
        case = parse_case(case_path)
        path, rest = command_of(case.run)
        if path is None:
            continue
        if "--help" in rest or "-h" in rest:
            kinds[path].add("help")
        elif case.exit == 2:
            kinds[path].add("usage")
        elif case.exit in (0, 1):
            kinds[path].add("success")
    return kinds


def test_the_command_table_is_read():
    assert len(COMMANDS) >= 30 and "ci run" in COMMANDS and "baseline push" in COMMANDS


def test_case_commands_are_found_behind_global_flags():
    assert command_of(["--config", "x.toml", "-q", "ci", "run", "--quick"]) == ("ci run", ["--quick"])
    assert command_of(["--format=json", "test"]) == ("test", [])
    assert command_of(["ci", "rn"]) == (None, ["ci", "rn"])


@pytest.mark.parametrize("path", COMMANDS)
def test_every_command_has_a_help_a_usage_error_and_a_success_case(path):
    missing = {"help", "usage", "success"} - coverage()[path]
    assert not missing, (f"tests/cli/cases/ has no {', '.join(sorted(missing))} case for 'gpuemu {path}': add "
                         f"one (tests/cli/README.md; 'pytest tests/e2e/test_cli_cases.py --update' fills in its output)")
