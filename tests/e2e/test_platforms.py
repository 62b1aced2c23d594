"""docs/platforms.md's checks stay wired up: the files the macOS workflow and the portable-path run name
exist, and the link-stub maker gives each symbol its library and fails on one no library exports."""
import pathlib
import re
import shutil
import subprocess
import sys

import pytest
import yaml

from e2e_support import REPO

STUBS = REPO / "scripts" / "cross_macos_stubs.py"
MULTIARCH_LIBDIR = pathlib.Path("/usr/lib") / subprocess.run(
    ["gcc", "-dumpmachine"], capture_output=True, text=True).stdout.strip()


def named_test_files(text: str) -> list[str]:
    return re.findall(r"(?:python/tests|tests/e2e)/test_\w+\.py", text)


def test_the_macos_workflow_builds_and_tests_on_macos():
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "macos.yml").read_text())
    (job,) = workflow["jobs"].values()
    assert job["runs-on"] == "macos-latest"
    runs = "\n".join(step.get("run", "") for step in job["steps"])
    assert "brew install" in runs and "ctest --test-dir build" in runs and "pytest" in runs
    assert "GPUEMU_STATIC" not in runs  # a dynamic build: macOS has no static executables
    files = named_test_files(runs)
    assert len(files) >= 10
    missing = [f for f in files if not (REPO / f).is_file()]
    assert not missing, f"macos.yml runs test files that do not exist: {missing}"


def test_the_portable_run_names_existing_tests_and_forces_the_portable_paths():
    script = (REPO / "scripts" / "test.sh").read_text()
    assert "-DGPUEMU_PORTABLE_PLATFORM=ON" in script
    block = script[script.index("PORTABLE_PYTEST=("):]
    files = named_test_files(block[:block.index(")")])
    assert len(files) >= 5
    missing = [f for f in files if not (REPO / f).is_file()]
    assert not missing, f"scripts/test.sh's portable run names test files that do not exist: {missing}"


def test_the_suite_runs_the_macos_cross_compile_and_fails_with_it():
    script = (REPO / "scripts" / "test.sh").read_text()
    stage = script[script.index("scripts/cross-macos.sh 2>&1"):]
    assert '[ "$rc" -eq 0 ] || status=1' in stage.split("\n\n")[0]
    assert 'tail -n 1 "$LOGS/cross-macos.log"' in script[script.index("== summary =="):]
    cross = (REPO / "scripts" / "cross-macos.sh").read_text()
    assert "TARGETS=${GPUEMU_CROSS_TARGETS:-x86_64-macos aarch64-macos}" in cross


needs_debian_libraries = pytest.mark.skipif(
    shutil.which("c++filt") is None or not (MULTIARCH_LIBDIR / "libcrypto.so.3").exists(),
    reason="needs binutils and the Debian libraries scripts/install-deps.sh installs")


def make_stubs(tmp_path, undefined: list[str]) -> subprocess.CompletedProcess:
    log = tmp_path / "link.log"
    log.write_text("".join(f"error: undefined symbol: {s}\n    note: referenced by x.o\n" for s in undefined))
    return subprocess.run([sys.executable, str(STUBS), str(tmp_path / "lib"), str(MULTIARCH_LIBDIR), str(log)],
                          capture_output=True, text=True, timeout=120)


@needs_debian_libraries
def test_stubs_give_each_symbol_the_library_that_exports_it(tmp_path):
    # C by name; pugixml's C++ by demangled name (libc++'s std::__1 against libstdc++'s std).
    proc = make_stubs(tmp_path, ["_EVP_sha256", "_sqlite3_open_v2", "_nng_close", "_curl_easy_init",
                                 "__ZN4pugi12xml_documentC1Ev"])
    assert proc.returncode == 0, proc.stderr
    assert "'_EVP_sha256'" in (tmp_path / "lib" / "libcrypto.tbd").read_text()
    assert "'_sqlite3_open_v2'" in (tmp_path / "lib" / "libsqlite3.tbd").read_text()
    assert "'__ZN4pugi12xml_documentC1Ev'" in (tmp_path / "lib" / "libpugixml.tbd").read_text()
    assert "install-name:" in (tmp_path / "lib" / "libnng.tbd").read_text()


@needs_debian_libraries
def test_stubs_fail_on_a_symbol_no_library_exports(tmp_path):
    # What a Linux-only call looks like to a macOS link: no library of ours has it either.
    proc = make_stubs(tmp_path, ["_EVP_sha256", "_memfd_create"])
    assert proc.returncode == 1
    assert "_memfd_create" in proc.stderr and "_EVP_sha256" not in proc.stderr
