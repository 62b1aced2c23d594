"""Constants and TOML builders the end-to-end tests import by name.

Kept out of conftest.py: pytest loads every suite's conftest as a module named "conftest", so a
test importing from it gets whichever suite's conftest was loaded first when suites run together.
"""
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]


def one_op_toml(op_script: str, reference: str = "ref_identity.py", extra: str = "", validation: str = "") -> str:
    """A project with one op 'op' over input x[M, N] and the given scripts."""
    return f"""
[project]
name = "e2e"

[validation]
dtypes = ["float32"]
seed = 7
timeout = 5
{validation}

[[ops]]
name = "op"
op_script = "{op_script}"
reference = "{reference}"
{extra}

[ops.schema]
dims = {{ M = [1, 8], N = [1, 70] }}
inputs = {{ x = ["M", "N"] }}
"""


# Runs argv under a small `python -S` that forks it and reports its wait4 rusage. Measuring the
# child from the test process itself would be wrong: Linux keeps a process's peak RSS across
# fork and exec, so a child that pytest spawns (vfork or fork) starts with pytest's own peak RSS
# (hundreds of MiB after the framework tests, 1.4 GiB in the ASan suite), whatever it allocates.
_MEASURE = ("import os, sys\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    os.execv(sys.argv[2], sys.argv[2:])\n"
            "_, status, usage = os.wait4(pid, 0)\n"
            "open(sys.argv[1], 'w').write('%d %d' % (os.waitstatus_to_exitcode(status), usage.ru_maxrss))\n")


def run_with_peak_rss(argv, tmp_dir: pathlib.Path, timeout: float, **popen_kwargs):
    """(exit code, stdout bytes, stderr bytes, peak RSS in bytes) of argv's own process image.
    On timeout the whole process group (the launcher and argv) is killed and TimeoutExpired raised."""
    import os
    import signal
    import subprocess
    import sys

    report = tmp_dir / "peak-rss.txt"
    proc = subprocess.Popen([sys.executable, "-S", "-c", _MEASURE, str(report), *map(str, argv)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, **popen_kwargs)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    code, kib = map(int, report.read_text().split())
    return code, out, err, kib * 1024
