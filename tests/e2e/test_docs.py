"""Every command and every option the binary offers is documented in docs/commands.md.

Walks `gpuemu --help` recursively, so a new command or flag without docs fails here.
"""
import re
import subprocess

from e2e_support import REPO


def help_text(binary, *path):
    return subprocess.run([str(binary), *path, "--help"], capture_output=True, text=True, timeout=30).stdout


def section(text, title):
    match = re.search(rf"^{title}:\n((?:  .*\n?)*)", text, re.M)
    return match.group(1) if match else ""


def walk(binary, path=()):
    text = help_text(binary, *path)
    subs = [line.split()[0] for line in section(text, "Subcommands").splitlines() if line.strip()]
    options = re.findall(r"--[a-z][a-z0-9-]*", section(text, "Options"))
    yield path, options
    for sub in subs:
        yield from walk(binary, (*path, sub))


def test_every_command_and_option_is_documented(gpuemu_bin):
    docs = (REPO / "docs" / "commands.md").read_text()
    missing = []
    for path, options in walk(gpuemu_bin):
        if path and f"gpuemu {' '.join(path)}" not in docs:
            missing.append(f"command 'gpuemu {' '.join(path)}'")
        for option in options:
            if option != "--help" and option not in docs:
                missing.append(f"option {option} of 'gpuemu {' '.join(path)}'")
    assert not missing, "undocumented in docs/commands.md: " + ", ".join(missing)
