"""Self-containment of the static gpuemu (scripts/build-static.sh, docs/static-build.md): no dynamic
dependencies; `version`, `report verify`, `lint` and an HTTP `baseline pull` (by host name, from a
server on 127.0.0.1) from an otherwise empty root directory (chroot);
`ci run` on the example project inside a minimal Debian made with debootstrap (cached under
third_party/build/rootfs, or $GPUEMU_THIRD_PARTY_DIR/rootfs). Needs root (chroot). Binary: $GPUEMU_STATIC_BIN, default build-static/gpuemu.
A check that cannot run is skipped with the reason (pytest -rs prints it) and fails under CI=true."""
import base64
import http.server
import json
import os
import shutil
import subprocess
import threading
import time
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
STATIC_BIN = Path(os.environ.get("GPUEMU_STATIC_BIN", REPO / "build-static" / "gpuemu"))
THIRD_PARTY = Path(os.environ.get("GPUEMU_THIRD_PARTY_DIR") or REPO / "third_party" / "build")
ROOTFS = Path(os.environ.get("GPUEMU_STATIC_ROOTFS", THIRD_PARTY / "rootfs"))
SUITE = "bookworm"
ROOTFS_PACKAGES = "python3,python3-numpy"
# What the cached root file system was made with; a different stamp means it is made again.
ROOTFS_STAMP = f"debootstrap --variant=minbase --include={ROOTFS_PACKAGES} {SUITE}\n"
BASELINE = '{"schema_version": 1, "kind": "gpuemu-baseline", "tag": "main", "entries": []}\n'
CHROOT_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "GPUEMU_HOME": "/tmp/gpuemu-home",
              "LANG": "C.UTF-8"}


def unavailable(reason):
    """Skips with the reason; under CI=true a check that cannot run is a failure, not a skip."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: this check may not be skipped)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def static_bin():
    if not os.access(STATIC_BIN, os.X_OK):
        unavailable(f"no static binary at {STATIC_BIN}: run scripts/build-static.sh (or set GPUEMU_STATIC_BIN)")
    return STATIC_BIN


@pytest.fixture(scope="module")
def root_user():
    if os.geteuid() != 0:
        unavailable("chroot needs root: run the static tests as root (scripts/test-static.sh under sudo)")
    for tool in ("chroot", "unshare"):
        if host_tool(tool) is None:
            unavailable(f"{tool} not found: it comes with Debian's coreutils / util-linux")


def host_tool(name):
    # Looked up on the host's PATH plus sbin: the chroot's own PATH (CHROOT_ENV) is not the host's.
    return shutil.which(name, path=os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"]))


def run(*args, timeout=300, **kwargs):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout, **kwargs)


def chroot(root, *args, timeout=120):
    """Runs args inside root with a minimal environment and nothing from the host's file system."""
    return run(host_tool("chroot"), root, *args, env=CHROOT_ENV, timeout=timeout)


def test_ldd_file_and_readelf_see_no_dynamic_dependencies(static_bin):
    ldd = run("ldd", static_bin, env=dict(os.environ, LC_ALL="C"))
    assert "not a dynamic executable" in ldd.stdout + ldd.stderr, ldd.stdout + ldd.stderr
    kind = run("file", "-b", static_bin)
    assert kind.returncode == 0, kind.stderr
    assert "statically linked" in kind.stdout, kind.stdout
    # No program interpreter and no dynamic section: nothing for a loader to resolve at start-up.
    headers = run("readelf", "--program-headers", "--dynamic", static_bin, env=dict(os.environ, LC_ALL="C"))
    assert headers.returncode == 0, headers.stderr
    assert "INTERP" not in headers.stdout
    assert "There is no dynamic section in this file." in headers.stdout
    assert "NEEDED" not in headers.stdout


@pytest.fixture(scope="module")
def empty_root(static_bin, root_user, tmp_path_factory):
    """An otherwise empty root: the binary, /tmp, /etc/hosts, a signed report (and a tampered copy), its
    public key and two PTX files. The key and report are made by the same binary outside the chroot."""
    work = tmp_path_factory.mktemp("static")
    project = work / "project"
    shutil.copytree(REPO / "examples", project)
    env = dict(os.environ, GPUEMU_HOME=str(work / "home"))
    tested = run(static_bin, "--format", "json", "-q", "--no-store", "test", "--op", "softmax", "--op",
                 "softmax_tail_bug", cwd=project, env=env, timeout=600)
    assert tested.returncode in (0, 1), tested.stderr
    (project / "result.json").write_text(tested.stdout)
    keys = run(static_bin, "keygen", "--out", work / "keys", cwd=work, env=env)
    assert keys.returncode == 0, keys.stderr
    root = work / "root"
    (root / "tmp").mkdir(parents=True)
    (root / "etc").mkdir()
    (root / "etc" / "hosts").write_text("127.0.0.1 baseline.test\n")
    signed = run(static_bin, "report", "sign", "result.json", "--key", work / "keys" / "gpuemu.key",
                 "--out", root / "REPORT.json", cwd=project, env=env)
    assert signed.returncode == 0, signed.stderr
    shutil.copy(work / "keys" / "gpuemu.pub", root / "gpuemu.pub")
    envelope = json.loads((root / "REPORT.json").read_text())
    statement = json.loads(base64.b64decode(envelope["payload"]))
    statement["predicate"]["seed"] = "1"  # a changed claim under the old signature
    envelope["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    (root / "TAMPERED.json").write_text(json.dumps(envelope))
    for ptx in ("saxpy.ptx", "saxpy_local.ptx"):
        shutil.copy(REPO / "tests" / "kernels" / ptx, root / ptx)
    shutil.copy(static_bin, root / "gpuemu")
    return root


def test_empty_root_holds_nothing_but_the_inputs(empty_root):
    names = sorted(p.name for p in empty_root.iterdir())
    assert names == ["REPORT.json", "TAMPERED.json", "etc", "gpuemu", "gpuemu.pub", "saxpy.ptx", "saxpy_local.ptx",
                     "tmp"]
    assert [p.name for p in (empty_root / "etc").iterdir()] == ["hosts"]


def test_version_in_empty_root(empty_root):
    proc = chroot(empty_root, "/gpuemu", "--format", "json", "version")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"name": "gpuemu", "version": run(STATIC_BIN, "version").stdout.split()[-1]}


def test_report_verify_in_empty_root(empty_root):
    good = chroot(empty_root, "/gpuemu", "report", "verify", "/REPORT.json", "--pub", "/gpuemu.pub")
    assert good.returncode == 0, good.stdout + good.stderr
    bad = chroot(empty_root, "/gpuemu", "report", "verify", "/TAMPERED.json", "--pub", "/gpuemu.pub")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "signature" in (bad.stdout + bad.stderr).lower()


def test_lint_ptx_in_empty_root(empty_root):
    # No ptxas, no Python and no CUDA in the root: the metrics come from the PTX text alone.
    proc = chroot(empty_root, "/gpuemu", "--format", "json", "lint", "/saxpy.ptx")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["tools"]["ptxas"] is None
    (kernel,) = doc["kernels"]
    assert kernel["passed"] is True, kernel
    assert kernel["metrics"]["instructions"] == {"value": 20, "from": "ptx"}
    assert kernel["metrics"]["ld.global"]["value"] == 2


@pytest.fixture
def http_baseline(tmp_path):
    """A plain HTTP server on 127.0.0.1 serving ci/main.json; records (Host, path) of each request."""
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "main.json").write_text(BASELINE)
    requests = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(tmp_path), **kwargs)

        def log_message(self, format, *args):
            requests.append((self.headers.get("Host"), self.path))

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], requests
    server.shutdown()
    server.server_close()
    thread.join()


def test_baseline_pull_over_http_by_host_name_in_empty_root(empty_root, http_baseline):
    # libcurl resolves through c-ares, which reads the root's /etc/hosts itself: no NSS module, no
    # nsswitch.conf and no shared library from the root is involved.
    port, requests = http_baseline
    proc = chroot(empty_root, "/gpuemu", "-v", "baseline", "pull", f"http://baseline.test:{port}/ci",
                  "--out", "/tmp/pulled.json")
    assert proc.returncode == 0, proc.stderr
    assert (empty_root / "tmp" / "pulled.json").read_text() == BASELINE
    assert requests == [(f"baseline.test:{port}", "/ci/main.json")]
    unknown = chroot(empty_root, "/gpuemu", "baseline", "pull", f"http://unknown.test:{port}/ci", "--retries", "0")
    assert unknown.returncode == 0 and unknown.stdout == ""  # a missing baseline is a warning
    assert "Could not resolve host: unknown.test" in unknown.stderr


def apt_mirror():
    """The Debian archive apt uses for SUITE on this machine (deb822 .sources or one-line .list)."""
    apt = Path("/etc/apt")
    for path in sorted(apt.glob("sources.list.d/*.sources")):
        for stanza in path.read_text().split("\n\n"):
            fields = {}
            for line in stanza.splitlines():
                if ":" in line and not line.startswith("#"):
                    key, value = line.split(":", 1)
                    fields[key.strip().lower()] = value.split()
            if "deb" in fields.get("types", []) and SUITE in fields.get("suites", []) and fields.get("uris"):
                return fields["uris"][0]
    for path in [apt / "sources.list", *sorted(apt.glob("sources.list.d/*.list"))]:
        if not path.is_file():
            continue
        for line in path.read_text().splitlines():
            words = [w for w in line.split() if not w.startswith("[")]
            if len(words) >= 3 and words[0] == "deb" and words[2] == SUITE:
                return words[1]
    return None


@pytest.fixture(scope="module")
def debian_root(root_user):
    """A minimal Debian with python3 and numpy, made once and kept under third_party/build/rootfs."""
    stamp = ROOTFS / ".gpuemu-rootfs"
    if stamp.is_file() and stamp.read_text() == ROOTFS_STAMP:
        return ROOTFS
    if host_tool("debootstrap") is None:
        unavailable("debootstrap is not installed: apt-get install debootstrap (scripts/test-static.sh does)")
    mirror = apt_mirror()
    if mirror is None:
        unavailable(f"no '{SUITE}' entry in /etc/apt/sources.list* to take the Debian mirror from")
    partial = ROOTFS.with_name(ROOTFS.name + ".partial")
    for old in (partial, ROOTFS):
        # Only this fixture mounts anything below them, and only in a private mount namespace.
        shutil.rmtree(old, ignore_errors=True)
    started = time.monotonic()
    made = run(host_tool("debootstrap"), "--variant=minbase", f"--include={ROOTFS_PACKAGES}", SUITE, partial, mirror,
               timeout=1800)
    if made.returncode != 0:
        log = partial / "debootstrap" / "debootstrap.log"
        tail = log.read_text()[-3000:] if log.is_file() else ""
        pytest.fail(f"debootstrap from {mirror} failed ({made.returncode}):\n{made.stderr[-3000:]}\n{tail}")
    (partial / ".gpuemu-rootfs").write_text(ROOTFS_STAMP)
    partial.rename(ROOTFS)
    print(f"debootstrap: made {ROOTFS} from {mirror} in {time.monotonic() - started:.0f} s")
    return ROOTFS


def test_ci_run_on_the_examples_in_minimal_debian(static_bin, debian_root):
    # The install layout gpuemu looks for: PREFIX/bin/gpuemu and its Python package in
    # PREFIX/share/gpuemu/python (found through /proc/self/exe, hence the private /proc).
    prefix = debian_root / "opt" / "gpuemu"
    work = debian_root / "work"
    for old in (prefix, work):
        shutil.rmtree(old, ignore_errors=True)
    (prefix / "bin").mkdir(parents=True)
    shutil.copy(static_bin, prefix / "bin" / "gpuemu")
    shutil.copytree(REPO / "python" / "gpuemu", prefix / "share" / "gpuemu" / "python" / "gpuemu",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "examples", work / "examples")
    proc = run(host_tool("unshare"), "--mount", "--pid", "--fork", f"--mount-proc={debian_root / 'proc'}",
               host_tool("chroot"), debian_root, "/bin/sh", "-c",
               "cd /work && exec /opt/gpuemu/bin/gpuemu --config examples/gpuemu.toml ci run --quick --out /work/out",
               env=CHROOT_ENV, timeout=900)
    assert proc.returncode == 1, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    result = json.loads((work / "out" / "result.json").read_text())
    assert result["command"] == "ci" and result["passed"] is False and result["partial"] is False
    with open(REPO / "examples" / "gpuemu.toml", "rb") as f:
        example_ops = [op["name"] for op in tomllib.load(f)["ops"]]
    assert sorted(op["op"] for op in result["ops"]) == sorted(example_ops)
    assert all(op["total"] > 0 for op in result["ops"]), result["ops"]
    failed = sorted(op["op"] for op in result["ops"] if op["failed"] + op["errors"] > 0)
    passed = sorted(op["op"] for op in result["ops"] if op["failed"] + op["errors"] == 0)
    # The example's buggy kernels (*_bug, *_no_*) fail and the correct ones pass, as they do on the host.
    assert failed and all("_bug" in name or "_no_" in name for name in failed), failed
    assert passed and not any("_bug" in name or "_no_" in name for name in passed), passed
    for report in ("junit.xml", "gpuemu.sarif", "summary.md"):
        assert (work / "out" / report).is_file(), report
