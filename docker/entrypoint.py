#!/usr/bin/env python3
"""The GitHub Action's entrypoint (/usr/local/bin/gpuemu-action in the image; action.yml, docs/action.md).

Reads the action's inputs from the INPUT_* variables the runner sets, checks them, runs
`gpuemu [--config FILE] ci run ...` in $GITHUB_WORKSPACE, copies the JUnit, SARIF and Markdown
reports to the requested paths and exits with gpuemu's exit code. Arguments given to the
entrypoint itself (`docker run IMAGE --jobs 4`) are passed on to `gpuemu ci run` after the
options made from the inputs. The gpuemu binary is $GPUEMU_BIN, else /usr/local/bin/gpuemu.
"""
import json
import os
import re
import shutil
import hashlib
import platform
import signal
import subprocess
import sys
import tempfile

DEFAULT_BIN = "/usr/local/bin/gpuemu"

# Exit codes of gpuemu (docs/commands.md); the entrypoint uses the same meanings.
EXIT_USAGE = 2
EXIT_ENVIRONMENT = 3

# Files of `ci run --out DIR` that the *-path inputs copy elsewhere: input name -> file name.
COPIES = {"junit-path": "junit.xml", "sarif-path": "gpuemu.sarif", "summary-path": "summary.md"}

# Every input of action.yml, in its order. tests/e2e/test_action.py checks the two agree.
INPUTS = ("config", "quick", "shard", "baseline", "sign-key", "fail-on", "allow-partial", "policy", "iterations", "seed", "jobs",
          "out", "junit-path", "sarif-path", "summary-path", "comment-on-pr", "github-token", "requirements",
          "pip-cache")

# The child's environment variable that carries github-token to `gpuemu ci publish --token-env`.
TOKEN_VARIABLE = "GPUEMU_ACTION_GITHUB_TOKEN"

BOOLEANS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
FAIL_ON = ("failures", "regressions", "never")


class InputError(Exception):
    """A bad action input: the message names the input and says what to write instead."""


def read_input(name):
    """The runner's value of input `name`: INPUT_ + the name upper-cased, spaces as '_', dashes kept."""
    return os.environ.get("INPUT_" + name.replace(" ", "_").upper(), "").strip()


def boolean(name, value):
    if value == "":
        return False
    if value not in BOOLEANS:
        raise InputError(f"input '{name}' must be true or false, got '{value}'")
    return BOOLEANS[value]


def integer(name, value, minimum, maximum=None, example="100"):
    if not re.fullmatch(r"[0-9]+", value):
        raise InputError(f"input '{name}' must be a whole number, got '{value}' (e.g. {name}: {example})")
    number = int(value)
    if number < minimum or (maximum is not None and number > maximum):
        bound = f"from {minimum} to {maximum}" if maximum is not None else f"at least {minimum}"
        raise InputError(f"input '{name}' must be {bound}, got {value}")
    return value


def shard(value):
    match = re.fullmatch(r"([0-9]+)/([0-9]+)", value)
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise InputError(f"input 'shard' must be I/N with 1 <= I <= N, got '{value}' "
                         "(e.g. shard: ${{ matrix.shard }}/4)")
    return value


def choice(name, value, allowed):
    if value not in allowed:
        raise InputError(f"input '{name}' must be one of {', '.join(allowed)}, got '{value}'")
    return value


class Plan:
    """What one run does: the gpuemu command line, where reports are copied, and files to clean up."""

    def __init__(self):
        self.command = []
        self.shown = []  # the command line for the log, with secrets replaced
        self.out = "gpuemu-out"
        self.copies = []  # (source file, destination) pairs
        self.temporary = []
        self.publish = None  # the `gpuemu ci publish` command when comment-on-pr is true, else None
        self.token = ""
        self.env = dict(os.environ)  # gpuemu's environment: PYTHONPATH gains the installed requirements


def key_file(plan, value):
    """sign-key is a path to gpuemu.key, or the key's PEM text itself (e.g. straight from a secret)."""
    if "-----BEGIN" not in value:
        return value, value
    # Outside the workspace, readable only by us, removed when the run ends: it never becomes an artifact.
    fd, path = tempfile.mkstemp(prefix="gpuemu-sign-", suffix=".key")
    with os.fdopen(fd, "w") as f:
        f.write(value if value.endswith("\n") else value + "\n")
    os.chmod(path, 0o600)
    plan.temporary.append(path)
    return path, "***"


def build_plan(binary, extra_args):
    """The command for the inputs, or InputError naming the first bad one."""
    plan = Plan()
    command = [binary]
    shown = [binary]
    config = read_input("config")
    if config:
        command += ["--config", config]
        shown += ["--config", config]
    command += ["ci", "run"]
    shown += ["ci", "run"]

    def add(option, value, display=None):
        command.extend([option, value])
        shown.extend([option, value if display is None else display])

    if boolean("quick", read_input("quick")):
        command.append("--quick")
        shown.append("--quick")
    if value := read_input("shard"):
        add("--shard", shard(value))
    if value := read_input("baseline"):
        add("--baseline", value)
    if value := read_input("iterations"):
        add("--iterations", integer("iterations", value, 1))
    if value := read_input("seed"):
        add("--seed", integer("seed", value, 0, 2**64 - 1, example="42"))
    if value := read_input("jobs"):
        add("--jobs", integer("jobs", value, 1, example="4"))
    if value := read_input("fail-on"):
        add("--fail-on", choice("fail-on", value, FAIL_ON))
    if boolean("allow-partial", read_input("allow-partial")):
        command.append("--allow-partial")
        shown.append("--allow-partial")
    if value := read_input("policy"):
        add("--policy", value)
    if value := read_input("sign-key"):
        path, display = key_file(plan, value)
        add("--sign-key", path, display)
    plan.out = read_input("out") or "gpuemu-out"
    add("--out", plan.out)
    for name, file_name in COPIES.items():
        if destination := read_input(name):
            plan.copies.append((os.path.join(plan.out, file_name), destination))
    if boolean("comment-on-pr", read_input("comment-on-pr")):
        plan.token = read_input("github-token")
        if not plan.token:
            raise InputError("input 'comment-on-pr' is true but 'github-token' is empty: leave github-token at its "
                             "default (${{ github.token }}) and give the job 'pull-requests: write'")
        plan.publish = [binary] + (["--config", config] if config else []) + [
            "ci", "publish", "--result", os.path.join(plan.out, "result.json"), "--token-env", TOKEN_VARIABLE]
    command.extend(extra_args)
    shown.extend(extra_args)
    plan.command, plan.shown = command, shown
    return plan


def install_requirements(env):
    """Installs the `requirements` input with pip into a folder of `pip-cache` named after the file's
    hash and the Python version, unless that folder is already complete (a restored actions/cache, or
    an earlier step), and puts it first on the PYTHONPATH gpuemu's workers inherit. Returns False after
    reporting a failure. An unchanged requirements file never reaches pip again."""
    requirements = read_input("requirements")
    if not requirements:
        return True
    if not os.path.isfile(requirements):
        raise InputError(f"input 'requirements' names '{requirements}', which is not a file in the workspace "
                         "(write a path relative to the repository root, e.g. requirements: requirements-gpuemu.txt)")
    python = env.get("GPUEMU_PYTHON") or "python3"
    cache = os.path.abspath(read_input("pip-cache") or ".gpuemu-pip")
    with open(requirements, "rb") as f:
        digest = hashlib.sha256(f.read() + platform.python_version().encode()).hexdigest()[:16]
    target = os.path.join(cache, "site-" + digest)
    stamp = os.path.join(target, ".gpuemu-installed")
    if os.path.isfile(stamp):
        print(f"gpuemu-action: requirements {requirements}: cached in {target}", file=sys.stderr, flush=True)
    else:
        shutil.rmtree(target, ignore_errors=True)  # a half-finished install from a cancelled run
        command = [python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--target", target,
                   "-r", requirements]
        print("gpuemu-action: " + " ".join(command), file=sys.stderr, flush=True)
        # Relative paths inside the file (-e ./pkg, --find-links wheels) are relative to the workspace.
        installed = subprocess.run(command, env=dict(env, PIP_CACHE_DIR=os.path.join(cache, "wheels")))
        if installed.returncode != 0:
            annotate_error(f"pip could not install input 'requirements' ({requirements}); pip's messages are "
                           "above. Check the package names and versions, and that the runner can reach the index")
            return False
        with open(stamp, "w", encoding="utf-8") as f:
            f.write(requirements + "\n")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (target, env.get("PYTHONPATH", "")) if p)
    return True


def pull_request_number():
    """The pull request of the event that started the workflow (pull_request, pull_request_target), or None."""
    path = os.environ.get("GITHUB_EVENT_PATH")
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            event = json.load(f)
    except (OSError, ValueError):
        return None
    number = (event.get("pull_request") or {}).get("number") if isinstance(event, dict) else None
    return number if isinstance(number, int) and number > 0 else None


def comment_on_pr(plan, exit_code):
    """Posts the findings as a pull-request review (`gpuemu ci publish`). A review that cannot be posted is a
    warning, not a failed check: the gate's verdict is gpuemu's exit code, which this never changes."""
    if plan.publish is None or exit_code not in (0, 1):
        return
    number = pull_request_number()
    if number is None:
        print("::notice title=gpuemu action::comment-on-pr: this run was not started by a pull request "
              f"(event {os.environ.get('GITHUB_EVENT_NAME', 'unknown')}); no review posted", flush=True)
        return
    command = plan.publish + ["--pr", str(number)]
    print("gpuemu-action: " + " ".join(command), file=sys.stderr, flush=True)
    env = dict(os.environ, **{TOKEN_VARIABLE: plan.token})
    published = subprocess.run(command, env=env)
    if published.returncode != 0:
        print("::warning title=gpuemu action::comment-on-pr: the review could not be posted (gpuemu ci publish "
              f"exited {published.returncode}; its message is in the log). Pull requests from forks get a "
              "read-only token: publish from a workflow_run job instead (examples/workflows/publish.yml)",
              flush=True)


def annotate_error(message):
    """An ::error annotation (escaped as GitHub's workflow commands require) and the same on stderr."""
    data = message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    print(f"::error title=gpuemu action::{data}", flush=True)
    print(f"gpuemu-action: error: {message}", file=sys.stderr, flush=True)


def written_outputs(path):
    """Names already set in $GITHUB_OUTPUT (name=value lines and name<<DELIMITER blocks)."""
    names, lines, i = set(), open(path, encoding="utf-8", errors="replace").read().splitlines(), 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            names.add(name)
            i += 1
            while i < len(lines) and lines[i] != delimiter:
                i += 1
        elif "=" in line:
            names.add(line.split("=", 1)[0])
        i += 1
    return names


def fallback_outputs(exit_code):
    """When gpuemu stopped before publishing (usage, config or environment error), still say passed=false,
    so `if: steps.X.outputs.passed != 'true'` works. failed and result stay unset: nothing was measured."""
    path = os.environ.get("GITHUB_OUTPUT")
    if not path or exit_code == 0:
        return
    try:
        if "passed" in written_outputs(path):
            return
    except FileNotFoundError:
        pass
    with open(path, "a", encoding="utf-8") as f:
        f.write("passed=false\n")


def copy_reports(plan, exit_code):
    """Copies the reports to the *-path inputs; a report that is missing after a run that wrote its
    reports (exit 0 or 1) is an error, after a run that stopped early only a note."""
    ok = True
    for source, destination in plan.copies:
        if not os.path.isfile(source):
            if exit_code in (0, 1):
                annotate_error(f"{source} was not written, so it cannot be copied to {destination}")
                ok = False
            else:
                print(f"gpuemu-action: {source} was not written (gpuemu exited {exit_code}); "
                      f"not copying it to {destination}", file=sys.stderr)
            continue
        # A destination ending in '/' or naming a directory receives the file under its own name.
        if destination.endswith("/") or os.path.isdir(destination):
            destination = os.path.join(destination, os.path.basename(source))
        try:
            parent = os.path.dirname(destination)
            if parent:
                os.makedirs(parent, exist_ok=True)
            if os.path.abspath(source) != os.path.abspath(destination):
                shutil.copyfile(source, destination)
        except OSError as e:
            annotate_error(f"cannot copy {source} to {destination}: {e.strerror}")
            ok = False
            continue
        print(f"gpuemu-action: copied {source} to {destination}", file=sys.stderr)
    return ok


def run(plan):
    """Runs gpuemu, passing SIGTERM/SIGINT on (in a container the entrypoint is PID 1, which the
    kernel does not kill by default, so a cancelled job would otherwise wait for Docker's SIGKILL)."""
    child = subprocess.Popen(plan.command, env=plan.env)

    def forward(signum, _frame):
        child.send_signal(signum)

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, forward)
    return child.wait()


def main(argv):
    binary = os.environ.get("GPUEMU_BIN") or DEFAULT_BIN
    workspace = os.environ.get("GITHUB_WORKSPACE")
    if workspace:
        try:
            os.chdir(workspace)
        except OSError as e:
            annotate_error(f"cannot enter GITHUB_WORKSPACE '{workspace}': {e.strerror}")
            return EXIT_ENVIRONMENT
    try:
        plan = build_plan(binary, argv[1:])
    except InputError as e:
        annotate_error(f"{e}; see docs/action.md")
        fallback_outputs(EXIT_USAGE)
        return EXIT_USAGE
    try:
        if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
            annotate_error(f"no gpuemu binary at {binary}: set GPUEMU_BIN to its path")
            fallback_outputs(EXIT_ENVIRONMENT)
            return EXIT_ENVIRONMENT
        try:
            installed = install_requirements(plan.env)
        except InputError as e:
            annotate_error(f"{e}; see docs/action.md")
            fallback_outputs(EXIT_USAGE)
            return EXIT_USAGE
        if not installed:
            fallback_outputs(EXIT_ENVIRONMENT)
            return EXIT_ENVIRONMENT
        print("gpuemu-action: " + " ".join(plan.shown), file=sys.stderr, flush=True)
        code = run(plan)
        if code < 0:  # killed by a signal: report it as an environment error, as gpuemu would
            code = EXIT_ENVIRONMENT
        if not copy_reports(plan, code) and code == 0:
            code = EXIT_ENVIRONMENT
        comment_on_pr(plan, code)
        fallback_outputs(code)
        return code
    finally:
        for path in plan.temporary:
            try:
                os.remove(path)
            except OSError:
                pass


if __name__ == "__main__":
    sys.exit(main(sys.argv))
