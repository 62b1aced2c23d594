"""The action's image as the Dockerfile describes it, run the way a runner runs a Docker action, with
no Docker engine: a minimal Debian made by debootstrap with the final stage's apt packages stands in
for `FROM debian:12-slim` plus its apt-get RUN; the final stage's COPY instructions (the static
binary from scripts/build-static.sh for `--from=build`) and its other RUNs are applied on an overlay;
then the ENTRYPOINT runs in a chroot with the workspace at /github/workspace, the file commands under
/github/file_commands and the INPUT_* variables, on a copy of the example project.

Needs root (mount, chroot), debootstrap and the static binary ($GPUEMU_STATIC_BIN, default
build-static/gpuemu). The Debian root is made once and kept under third_party/build/action-rootfs.
A check that cannot run is skipped with the reason, and fails under CI=true.
"""
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from action_support import DOCKERFILE, dockerfile_instructions, input_variables, parse_outputs, stages  # noqa: E402
from e2e_support import REPO  # noqa: E402

STATIC_BIN = Path(os.environ.get("GPUEMU_STATIC_BIN", REPO / "build-static" / "gpuemu"))
# third_party/build unless GPUEMU_THIRD_PARTY_DIR (scripts/test.sh) names a folder shared across clones.
ROOTFS = Path(os.environ.get("GPUEMU_THIRD_PARTY_DIR") or REPO / "third_party" / "build") / "action-rootfs"
SUITES = {"debian:12-slim": "bookworm"}  # FROM of the final stage -> the Debian suite debootstrap makes
# What a Docker image's environment has before the runner adds its own (the debian images' PATH).
IMAGE_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}


def unavailable(reason):
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: this check may not be skipped)", pytrace=False)
    pytest.skip(reason)


def final_stage():
    return stages(dockerfile_instructions(DOCKERFILE.read_text()))[-1]


def apt_packages(stage):
    """The packages of the stage's `apt-get install` RUN (what debootstrap must include)."""
    for keyword, arguments in stage["instructions"]:
        match = re.search(r"apt-get install ([^&;]*)", arguments) if keyword == "RUN" else None
        if match:
            return sorted(w for w in match.group(1).split() if not w.startswith("-"))
    pytest.fail("the Dockerfile's final stage installs no packages with apt-get install")


def debian_mirror(suite):
    """The archive this machine's apt uses for `suite`, else deb.debian.org."""
    for path in sorted(Path("/etc/apt/sources.list.d").glob("*.sources")):
        for stanza in path.read_text().split("\n\n"):
            fields = dict(line.split(":", 1) for line in stanza.splitlines() if ":" in line and line[0] != "#")
            fields = {k.strip().lower(): v.split() for k, v in fields.items()}
            if "deb" in fields.get("types", []) and suite in fields.get("suites", []) and fields.get("uris"):
                return fields["uris"][0]
    for path in [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*.list"))]:
        for line in path.read_text().splitlines() if path.is_file() else []:
            words = [w for w in line.split() if not w.startswith("[")]
            if len(words) >= 3 and words[0] == "deb" and words[2] == suite:
                return words[1]
    return "http://deb.debian.org/debian"


@pytest.fixture(scope="module")
def base_root():
    """debootstrap of the final stage's base and packages, made once (under a lock) and kept."""
    if os.geteuid() != 0:
        unavailable("the image test mounts an overlay and chroots: run it as root")
    stage = final_stage()
    suite = SUITES.get(stage["from"])
    assert suite, f"the final stage is FROM {stage['from']}: add its Debian suite to SUITES"
    packages = apt_packages(stage)
    stamp = f"debootstrap --variant=minbase --include={','.join(packages)} {suite}\n"
    ROOTFS.parent.mkdir(parents=True, exist_ok=True)
    with open(ROOTFS.parent / "action-rootfs.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        marker = ROOTFS / ".gpuemu-rootfs"
        if marker.is_file() and marker.read_text() == stamp:
            return ROOTFS
        if shutil.which("debootstrap") is None:
            unavailable("debootstrap is not installed (apt-get install debootstrap)")
        partial = ROOTFS.with_name(ROOTFS.name + ".partial")
        for old in (partial, ROOTFS):
            shutil.rmtree(old, ignore_errors=True)
        started = time.monotonic()
        made = subprocess.run(["debootstrap", "--variant=minbase", f"--include={','.join(packages)}", suite,
                               str(partial), debian_mirror(suite)], capture_output=True, text=True, timeout=1800)
        assert made.returncode == 0, f"debootstrap failed:\n{made.stderr[-3000:]}"
        (partial / ".gpuemu-rootfs").write_text(stamp)
        partial.rename(ROOTFS)
        print(f"debootstrap: made {ROOTFS} in {time.monotonic() - started:.0f} s")
    return ROOTFS


@pytest.fixture(scope="module")
def static_bin():
    if not os.access(STATIC_BIN, os.X_OK):
        unavailable(f"no static binary at {STATIC_BIN}: run scripts/build-static.sh (or set GPUEMU_STATIC_BIN)")
    return STATIC_BIN


def context_source(source, from_stage, static_bin):
    """A COPY source on this machine: the build context is the repository; the build stage copied it
    to /src and built /src/build-static/gpuemu, which is the static binary here."""
    if from_stage is None:
        return REPO / source
    assert from_stage == "build" and source.startswith("/src/"), f"COPY --from={from_stage} {source}"
    relative = source[len("/src/"):]
    return static_bin if relative == "build-static/gpuemu" else REPO / relative


def apply_copies(stage, upper, static_bin):
    for keyword, arguments in stage["instructions"]:
        if keyword != "COPY":
            continue
        words = arguments.split()
        options = {w.split("=", 1)[0]: w.split("=", 1)[1] for w in words if w.startswith("--")}
        source, destination = [w for w in words if not w.startswith("--")]
        assert set(options) <= {"--from"}, f"COPY options this test does not model: {options}"
        path = context_source(source, options.get("--from"), static_bin)
        target = upper / destination.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir():  # COPY of a directory copies its contents; .dockerignore drops caches
            shutil.copytree(path, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(path, target)


# Runs inside `unshare --mount --pid --fork`: mounts the overlay and /proc, runs the stage's RUNs in
# the chroot, then the entrypoint with the runner's environment, and exits with its code.
DRIVER = r"""
import json, subprocess, sys
spec = json.loads(sys.argv[1])
m = spec["merged"]
subprocess.run(["mount", "-t", "overlay", "overlay", "-o",
                f"lowerdir={spec['lower']},upperdir={spec['upper']},workdir={spec['work']}", m], check=True)
subprocess.run(["mount", "-t", "proc", "proc", m + "/proc"], check=True)
for command in spec["runs"]:
    step = subprocess.run(["chroot", m, "/bin/sh", "-c", command], env=spec["image_env"])
    if step.returncode != 0:
        print(f"RUN {command!r} failed with {step.returncode}", file=sys.stderr)
        sys.exit(90)
sys.exit(subprocess.run(["chroot", m, *spec["entrypoint"]], env=spec["env"]).returncode)
"""


def test_the_image_runs_the_action_on_the_example_project(base_root, static_bin, tmp_path):
    stage = final_stage()
    upper, work, merged = tmp_path / "upper", tmp_path / "work", tmp_path / "merged"
    for d in (upper, work, merged):
        d.mkdir()
    apply_copies(stage, upper, static_bin)
    runs = [a for k, a in stage["instructions"] if k == "RUN" and "apt-get" not in a]
    (entrypoint,) = [json.loads(a) for k, a in stage["instructions"] if k == "ENTRYPOINT"]

    # What the runner mounts into a Docker action's container.
    workspace = upper / "github" / "workspace"
    shutil.copytree(REPO / "examples", workspace, ignore=shutil.ignore_patterns("__pycache__"))
    commands = upper / "github" / "file_commands"
    commands.mkdir(parents=True)
    (commands / "set_output_1").write_text("")
    (commands / "step_summary_1").write_text("")
    (upper / "github" / "home").mkdir()
    env = dict(IMAGE_ENV, HOME="/github/home", CI="true", GITHUB_ACTIONS="true",
               GITHUB_WORKSPACE="/github/workspace", GITHUB_OUTPUT="/github/file_commands/set_output_1",
               GITHUB_STEP_SUMMARY="/github/file_commands/step_summary_1")
    # A bundled policy pack: compiled into the binary, so it needs no file in the image.
    env.update(input_variables({"quick": "true", "policy": "llm-kernels", "junit-path": "reports/junit.xml",
                                "sarif-path": "reports/gpuemu.sarif"}))

    spec = {"lower": str(base_root), "upper": str(upper), "work": str(work), "merged": str(merged), "runs": runs,
            "entrypoint": entrypoint, "image_env": IMAGE_ENV, "env": env}
    proc = subprocess.run(["unshare", "--mount", "--pid", "--fork", sys.executable, "-c", DRIVER, json.dumps(spec)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 1, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"

    result = json.loads((workspace / "gpuemu-out" / "result.json").read_text())
    assert result["ci"]["quick"] is True and result["passed"] is False
    for op in result["ops"]:  # llm-kernels: quick runs check bfloat16 and float16 only
        cases = {d["dtype"]: d["total"] for d in op["dtypes"]}
        assert cases.get("float32", 0) == 0 and cases["float16"] > 0 and cases["bfloat16"] > 0, (op["op"], cases)
    failed = sorted(op["op"] for op in result["ops"] if op["failed"] + op["errors"] > 0)
    passed = sorted(op["op"] for op in result["ops"] if op["failed"] + op["errors"] == 0)
    assert failed and all("_bug" in name or "_no_" in name for name in failed), failed
    assert passed and not any("_bug" in name or "_no_" in name for name in passed), passed
    outputs = parse_outputs((commands / "set_output_1").read_text())
    assert outputs == {"passed": "false", "failed": str(sum(op["failed"] + op["errors"] for op in result["ops"])),
                       "not_run": "0", "result": "gpuemu-out/result.json"}
    errors = [line for line in proc.stdout.splitlines() if line.startswith("::error ")]
    assert errors and all("file=kernels/" in line for line in errors), errors[:3]
    assert (workspace / "reports" / "junit.xml").read_bytes() == (workspace / "gpuemu-out" / "junit.xml").read_bytes()
    assert json.loads((workspace / "reports" / "gpuemu.sarif").read_text())["runs"][0]["results"]
    assert "gpuemu reproduce" in (commands / "step_summary_1").read_text()
