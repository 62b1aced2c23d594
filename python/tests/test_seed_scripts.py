# The seed documents' own scripts (faq.txt's matmul_ref.py, execution-modes.txt's run_softmax.py,
# copied into seed_scripts/) through the daemon, inline and the CLI: issue 31, items 1, 2, 11 and 13.
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from gpuemu import Client
from gpuemu._internal.client.inline import BFLOAT16_STARTUP

SEED_SCRIPTS = Path(__file__).resolve().parent / "seed_scripts"
# execution-modes.txt's op script, copied as written, is kept once: with the seed documents' other scripts.
DOC_SCRIPTS = Path(__file__).resolve().parents[2] / "tests" / "e2e" / "seed_docs" / "scripts"

SEED_TOML = """
[project]
name = "seeds"

[validation]
dtypes = ["float32", "bfloat16"]

[[ops]]
name = "my_matmul"
reference = "scripts/matmul_ref.py"
input_names = ["a", "b"]
execution_mode = "client_side"

[ops.schema]
dims = { M = [1, 9], K = [1, 17], N = [1, 9] }
inputs = { a = ["M", "K"], b = ["K", "N"] }
output = ["M", "N"]

[[ops]]
name = "my_matmul_module"
module = "seed_ops:matmul"
reference = "scripts/matmul_ref.py"

[ops.schema]
dims = { M = [1, 9], K = [1, 17], N = [1, 9] }
inputs = { a = ["M", "K"], b = ["K", "N"] }
output = ["M", "N"]

[[ops]]
name = "my_matmul_module_bug"
extends = "my_matmul_module"
module = "seed_ops:matmul_bug"

[[ops]]
name = "my_softmax"
reference = "scripts/ref_softmax.py"
op_script = "scripts/run_softmax.py"
input_names = ["x"]
execution_mode = "script_based"

[ops.schema]
dims = { M = [1, 4], N = [1, 12] }
inputs = { x = ["M", "N"] }
output = ["M", "N"]

[ops.tolerances]
bfloat16 = { atol = 2e-2, rtol = 5e-2 }

[[ops]]
name = "my_softmax_bug"
extends = "my_softmax"
op_script = "scripts/run_softmax_bug.py"
"""


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    """A project of the seed documents' scripts: gpuemu.toml, scripts/, seed_ops.py (module ops)."""
    root = tmp_path_factory.mktemp("seeds")
    (root / "scripts").mkdir()
    for name in ("matmul_ref.py", "ref_softmax.py"):
        shutil.copy(SEED_SCRIPTS / name, root / "scripts" / name)
    shutil.copy(DOC_SCRIPTS / "run_softmax.py", root / "scripts" / "run_softmax.py")
    shutil.copy(SEED_SCRIPTS / "seed_ops.py", root / "seed_ops.py")
    text = (DOC_SCRIPTS / "run_softmax.py").read_text()
    right = "output = e_x / e_x.sum(axis=-1, keepdims=True)"
    assert right in text
    # The bug: normalised by the row's largest term instead of the sum (right only for one column).
    (root / "scripts" / "run_softmax_bug.py").write_text(text.replace(right, right.replace(".sum(", ".max(")))
    (root / "gpuemu.toml").write_text(SEED_TOML)
    return root


def matmul_case(seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((5, 7)).astype(np.float32)
    b = rng.standard_normal((7, 3)).astype(np.float32)
    if dtype == "bfloat16":  # float32 arrays holding bfloat16 values, as gpuemu's cases are
        a, b = (x.astype(ml_dtypes.bfloat16).astype(np.float32) for x in (a, b))
    return a, b


def seeds_client(request, seeds, monkeypatch, tmp_path, mode):
    """A client of the seeds project: through the examples' daemon, or inline (no daemon at all)."""
    home = request.getfixturevalue("daemon").home if mode == "daemon" else tmp_path
    monkeypatch.setenv("GPUEMU_HOME", str(home))
    return Client(config=str(seeds / "gpuemu.toml"), inline=mode == "inline")


@pytest.mark.parametrize("mode", ["daemon", "inline"])
def test_faq_reference_names_its_output_result_and_an_op_returns_out(request, seeds, monkeypatch, tmp_path, mode):
    # Item 1 (and 2 inline): one output each side is the same output, whatever the names.
    client = seeds_client(request, seeds, monkeypatch, tmp_path, mode)
    a, b = matmul_case()
    good = client.validate_op("my_matmul", {"a": a, "b": b}, a @ b)
    assert good.passed, good.failures
    bad = client.validate_op("my_matmul", {"a": a, "b": b}, (a @ b) * 1.01)
    assert not bad.passed and bad.kind == "mismatch" and "result[" in bad.failures[0]["message"]
    fuzzed = client.fuzz_op_client_side("my_matmul", run_op=lambda i: i["a"] @ i["b"], iterations=6, seed=3,
                                        dtypes=["float32"], value_distribution="regular")
    assert fuzzed.passed == fuzzed.total == 6, [f.failures for f in fuzzed.failures]
    buggy = client.fuzz_op_client_side("my_matmul", run_op=lambda i: (i["a"] @ i["b"]) * 1.01, iterations=6,
                                       seed=3, dtypes=["float32"], value_distribution="regular")
    assert buggy.failed > 0 and {f.kind for f in buggy.failures} == {"mismatch"}


@pytest.mark.parametrize("mode", ["daemon", "inline"])
def test_bfloat16_reaches_the_faq_template_the_same_way_in_every_mode(request, seeds, monkeypatch, tmp_path, mode):
    # Item 11: np.dtype(t["dtype"]) of a bfloat16 case works in the reference process in both modes.
    client = seeds_client(request, seeds, monkeypatch, tmp_path, mode)
    a, b = matmul_case(1, "bfloat16")
    exact = (a.astype(np.float64) @ b.astype(np.float64)).astype(ml_dtypes.bfloat16)
    good = client.validate_op("my_matmul", {"a": a, "b": b}, exact, dtype="bfloat16")
    assert good.passed, good.failures
    bad = client.validate_op("my_matmul", {"a": a, "b": b}, (exact.astype(np.float32) * 1.1).astype(ml_dtypes.bfloat16),
                             dtype="bfloat16")
    assert bad.kind == "mismatch", bad.failures


def test_inline_never_imports_a_stdin_script(seeds, tmp_path):
    # Item 2: with stdin an open pipe that never ends (a terminal, `sleep 8 |`), importing the FAQ's
    # script would block on sys.stdin.read(); run as a process it cannot.
    code = ("import numpy as np\nfrom gpuemu import Client\n"
            "a = np.ones((2, 3), np.float32); b = np.ones((3, 4), np.float32)\n"
            f"client = Client(config={str(seeds / 'gpuemu.toml')!r}, inline=True)\n"
            "r = client.validate_op('my_matmul', {'a': a, 'b': b}, a @ b)\n"
            "print(r.passed, r.kind)\n")
    env = {**os.environ, "GPUEMU_HOME": str(tmp_path)}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[1]), env.get("PYTHONPATH", "")])
    with subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path) as proc:
        try:
            out, err = proc.communicate(timeout=60)  # stdin stays open until then
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail("inline validate_op read the caller's stdin (the FAQ's script was imported)")
    assert out.split() == ["True", "none"], err


def test_cli_runs_the_seed_scripts_with_either_output_name_and_bfloat16(gpuemu_bin, seeds, tmp_path):
    # Items 1 and 11 through the CLI: a module op ("out") against the FAQ reference ("result"), and
    # execution-modes.txt's op script in bfloat16; each with its buggy twin.
    env = {**os.environ, "GPUEMU_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}

    def fuzz(*args):
        argv = [str(gpuemu_bin), "--no-store", "--format", "json", "fuzz", *args, "-n", "6", "--seed", "7",
                "--values", "regular"]
        return subprocess.run(argv, cwd=seeds, env=env, capture_output=True, text=True, timeout=300)

    for op, dtype in (("my_matmul_module", "float32"), ("my_matmul_module", "bfloat16"), ("my_softmax", "bfloat16"),
                      ("my_softmax", "float32")):
        ok = fuzz("--op", op, "--dtype", dtype)
        assert ok.returncode == 0, f"{op} {dtype}: {ok.stdout[-3000:]} {ok.stderr[-2000:]}"
        bug = fuzz("--op", f"{op}_bug", "--dtype", dtype)
        report = json.loads(bug.stdout)["ops"][0]
        assert bug.returncode == 1 and report["failed"] > 0, bug.stderr
        assert {f["kind"] for f in report["failures"]} == {"mismatch"}, report["failures"][0]


def test_the_bfloat16_startup_hook_names_the_dtype_and_keeps_a_users_sitecustomize(tmp_path):
    # Item 11's mechanism: gpuemu/script_startup first on PYTHONPATH (only for bfloat16 cases).
    (tmp_path / "sitecustomize.py").write_text("import builtins\nbuiltins.USER_SITE_RAN = True\n")
    code = "import builtins, numpy as np\nprint(np.dtype('bfloat16'), getattr(builtins, 'USER_SITE_RAN', False))\n"

    def run(*paths):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, paths))}
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)

    assert run(BFLOAT16_STARTUP, tmp_path).stdout.split() == ["bfloat16", "True"]
    without = run(tmp_path)  # what a plain-protocol script meets without the hook
    assert without.returncode == 1 and "data type 'bfloat16' not understood" in without.stderr


def test_inline_runs_a_stdin_script_as_the_engine_does_cwd_and_timeout(tmp_path, monkeypatch):
    # Item 2's process, as script-protocol.md's: the project root as cwd, the op's timeout, the group killed.
    (tmp_path / "refs").mkdir()
    (tmp_path / "refs" / "where.py").write_text(
        "import json, os, sys, time\nrequest = json.load(sys.stdin)\n"
        "if os.path.exists('slow'):\n    time.sleep(120)\n"
        "print(json.dumps({'shape': [1], 'dtype': 'float64', 'data': 'AAAAAAAA8D8='}))\n")  # [1.0]
    (tmp_path / "gpuemu.toml").write_text('[[ops]]\nname = "where"\nreference = "refs/where.py"\ntimeout = 2\n')
    monkeypatch.setenv("GPUEMU_HOME", str(tmp_path / "home"))
    client = Client(config=str(tmp_path / "gpuemu.toml"), inline=True)
    x = np.zeros(1, np.float32)
    assert client.validate_op("where", {"x": x}, np.ones(1)).passed
    (tmp_path / "slow").write_text("")  # found only from the project root: the script's cwd
    started = time.monotonic()
    slow = client.validate_op("where", {"x": x}, np.ones(1))
    assert slow.kind == "reference_error" and "timed out after 2 s" in slow.failures[0]["message"]
    assert time.monotonic() - started < 30


NHWC_OPS = '''
import numpy as np
import torch


def double(inputs):
    x = inputs["x"]
    if not x.is_contiguous(memory_format=torch.channels_last):
        raise ValueError(f"not in channels_last memory: strides {x.stride()}")
    return x * 2


def contiguous_only(inputs):
    x = inputs["x"]
    if not x.is_contiguous():
        raise ValueError(f"expects NCHW memory: strides {x.stride()}")
    return x * 2


def double_ref(inputs):
    return np.asarray(inputs["x"], np.float64) * 2
'''


def test_a_channels_last_case_reaches_a_torch_op_in_torch_channels_last_format(gpuemu_bin, tmp_path):
    # Item 13 end to end: `layouts = ["channels_last"]` gives a pytorch op NHWC memory that torch
    # itself calls channels_last; an op that assumes NCHW memory fails on it.
    pytest.importorskip("torch")
    (tmp_path / "nhwc_ops.py").write_text(NHWC_OPS)
    op = ('[[ops]]\nname = "{name}"\nmodule = "nhwc_ops:{fn}"\nreference = "nhwc_ops:double_ref"\n'
          'framework = "pytorch"\nlayouts = ["channels_last"]\ndtypes = ["float32"]\n\n'
          '[ops.inputs.x]\nshape = [2, 3, 4, 5]\n')
    (tmp_path / "gpuemu.toml").write_text('[project]\nname = "nhwc"\n\n' + op.format(name="nhwc", fn="double") +
                                          op.format(name="nchw_only", fn="contiguous_only"))
    env = {**os.environ, "GPUEMU_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}

    def fuzz(name):
        argv = [str(gpuemu_bin), "--no-store", "--format", "json", "fuzz", "--op", name, "-n", "3", "--seed", "5",
                "--layout", "channels_last"]
        return subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)

    ok = fuzz("nhwc")
    assert ok.returncode == 0, ok.stdout[-3000:] + ok.stderr[-2000:]
    assert {f["layout"] for f in json.loads(ok.stdout)["ops"][0]["failures"]} == set()
    bad = fuzz("nchw_only")
    report = json.loads(bad.stdout)["ops"][0]
    assert bad.returncode == 1 and report["failed"] + report["errors"] == 3, bad.stderr
    assert {(f["kind"], f["layout"]) for f in report["failures"]} == {("op_error", "channels_last")}
    assert "expects NCHW memory: strides (60, 1, 15, 3)" in report["failures"][0]["message"] + \
        report["failures"][0].get("stderr", "")
