# The Python examples of the seed documents (python-api.txt, execution-modes.txt, faq.txt), run as
# written against a real daemon, inline and the CLI; only op names (and counts) are ours.
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from gpuemu import Client, ClientError, DaemonError
from gpuemu.client.inline import BFLOAT16_STARTUP

EXAMPLES = {
    "client_side_example.py": """
        import numpy as np
        from gpuemu import Client
        from gpuemu.validate import validate_op

        client = Client()

        # Prepare inputs
        x = np.random.randn(32, 128).astype(np.float32)

        # Run your op (on GPU or CPU)
        output = (np.exp(x - x.max(-1, keepdims=True)) / np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True))

        # Validate against reference
        result = client.validate_op("softmax_client", {"x": x}, output)
        print(f"Passed: {result.passed}, max_diff: {result.max_diff:.2e}")
        assert result.passed
    """,
    "client_side_context.py": """
        import numpy as np
        from gpuemu import Client
        from gpuemu.validate import validate_op

        client = Client()
        x = np.random.randn(32, 128).astype(np.float32)

        with validate_op(client, "softmax_client", inputs={"x": x}) as ctx:
            e = np.exp(x - x.max(-1, keepdims=True))
            ctx["output"] = e / e.sum(-1, keepdims=True)
        # Raises ValidationError if validation fails
    """,
    "python_api_context.py": """
        import numpy as np
        from gpuemu.validation import validate_op

        x = np.random.randn(4, 40).astype(np.float32)
        def my_softmax(x):
            e = np.exp(x - x.max(-1, keepdims=True))
            return e / e.sum(-1, keepdims=True)

        with validate_op("softmax_client", inputs={"x": x}) as ctx:
            output = my_softmax(x)
            ctx.set_output(output)
        assert ctx.result.passed
    """,
    "client_side_fuzz.py": """
        import numpy as np
        from gpuemu import Client

        client = Client()

        def run_my_op(inputs):
            \"\"\"Your GPU kernel wrapper.\"\"\"
            x = inputs["x"]
            e = np.exp(x - x.max(-1, keepdims=True))
            return e / e.sum(-1, keepdims=True)

        results = client.fuzz_op_client_side(
            "softmax_client",
            run_op=run_my_op,
            iterations=10,
            seed=42,
        )

        print(f"Passed: {results.passed}/{results.total}")
        for failure in results.failures:
            print(f"  Seed {failure.seed}: {failure.failures[0]['message']}")
        assert results.passed == results.total == 10
    """,
    "daemon_orchestrated_single.py": """
        from gpuemu import Client

        client = Client()

        # 1. Fetch a test case from the daemon
        test_case = client.get_test_case("matmul", seed=42)

        print(f"Seed: {test_case['seed']}")
        print(f"Shape: {test_case['shape']}")
        print(f"DType: {test_case['dtype']}")

        # 2. Run your op with the generated inputs
        a = test_case["inputs"]["a"]
        b = test_case["inputs"]["b"]
        output = a.astype("float64") @ b.astype("float64")  # Your GPU matmul here

        # 3. Submit the output for validation
        result = client.submit_output(
            "matmul",
            test_case["inputs"],
            output,
            seed=test_case["seed"],
        )

        print(f"Passed: {result.passed}, max_diff: {result.max_diff:.2e}")
        assert result.passed
    """,
    "daemon_orchestrated_batch.py": """
        from gpuemu import Client

        client = Client()

        # Fetch a batch of 50 test cases
        cases = client.get_test_batch("matmul", count=8, seed=42)

        passed = 0
        failed = 0

        for case in cases:
            a = case["inputs"]["a"]
            b = case["inputs"]["b"]
            output = a.astype("float64") @ b.astype("float64")  # Your GPU matmul

            result = client.submit_output(
                "matmul",
                case["inputs"],
                output,
                seed=case["seed"],
            )

            if result.passed:
                passed += 1
            else:
                failed += 1
                print(f"FAIL seed={case['seed']}: {result.failures[0]['message']}")

        print(f"Results: {passed} passed, {failed} failed out of {len(cases)}")
        assert failed == 0
    """,
    "python_api_fuzz_reproduce.py": """
        from gpuemu import Client

        client = Client()
        client.ping()
        results = client.fuzz_op("softmax_tail_bug", seed=12345, iterations=10)
        print(f"Passed: {results.passed}/{results.total}")
        for failure in results.failures:
            print(f" Seed {failure.seed}: {failure.failures[0]['message']}")
        repro = client.reproduce(results.failures[0].seed)
        print(f"Op: {repro.result.op_name}")
        print(f"Input shape: {repro.inputs['x'].shape}")
        result = client.minimize(results.failures[0].seed, max_iters=30)
        print(f"Minimized shape: {result.minimized_shape}")
        failures = client.list_failures(limit=10)
        for f in failures:
            print(f"Seed {f.seed}: {f.op_name}")
        assert results.failed > 0 and failures
    """,
}


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_seed_example_runs_as_written(name, daemon, monkeypatch, capsys):
    monkeypatch.chdir(daemon.project)
    monkeypatch.setenv("GPUEMU_HOME", str(daemon.home))  # Client() finds the socket by itself
    code = compile(textwrap.dedent(EXAMPLES[name]), name, "exec")
    exec(code, {"__name__": "__main__"})
    assert capsys.readouterr().out or name.endswith("context.py")


# ── issue 31: the seed documents' own scripts and calls, through the daemon, inline and the CLI ──
# The FAQ's matmul_ref.py and execution-modes.txt's run_softmax.py are copied into seed_scripts/
# as written (users copy them); the config around them is execution-modes.txt's, with schemas.

SEED_SCRIPTS = Path(__file__).resolve().parent / "seed_scripts"

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
    for name in ("matmul_ref.py", "run_softmax.py", "ref_softmax.py"):
        shutil.copy(SEED_SCRIPTS / name, root / "scripts" / name)
    shutil.copy(SEED_SCRIPTS / "seed_ops.py", root / "seed_ops.py")
    text = (SEED_SCRIPTS / "run_softmax.py").read_text()
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


FAQ_CALIBRATE = """
from gpuemu.tolerances import calibrate_tolerance

# Run multiple iterations and find the tightest tolerance that passes
recommended = calibrate_tolerance(client, "softmax", dtype="float32", iterations=20)
print(recommended)  # {"atol": 2.5e-6, "rtol": 3.1e-6}
"""


def test_faq_calibrate_tolerance_call(daemon, monkeypatch, capsys):
    # Item 8: faq.txt's text (op and iteration count ours); python-api.txt's form in test_tolerance.py.
    monkeypatch.chdir(daemon.project)
    monkeypatch.setenv("GPUEMU_HOME", str(daemon.home))
    scope = {"client": Client()}
    exec(compile(FAQ_CALIBRATE, "faq_calibrate.py", "exec"), scope)
    recommended = scope["recommended"]
    assert set(recommended) == {"atol", "rtol"} and recommended["atol"] > 0 and recommended["rtol"] > 0
    assert "'atol'" in capsys.readouterr().out
    with pytest.raises(ClientError, match="must be a gpuemu.Client"):
        scope["calibrate_tolerance"]("localhost", "softmax", dtype="float32")


def test_lint_kernel_metrics_answer_both_spellings(daemon, monkeypatch):
    # Item 14: python-api.txt's register_count / spill_count next to docs/lint.md's names.
    monkeypatch.chdir(daemon.project)
    monkeypatch.setenv("GPUEMU_HOME", str(daemon.home))
    ptx = (Path(__file__).resolve().parents[2] / "tests" / "kernels" / "reduce_loop.ptx").read_text()
    kernels = Client().lint_kernel(ptx)
    assert kernels
    for kernel in kernels:
        metrics = kernel["metrics"]
        assert "register_count" in metrics
        assert metrics["register_count"] == metrics.get("registers", metrics.get("virtual_registers_32bit"))
        assert ("spill_count" in metrics) == ("spills" in metrics)
        if "spills" in metrics:
            assert metrics["spill_count"] == metrics["spills"]
        else:
            with pytest.raises(KeyError, match="ptxas"):
                metrics["spill_count"]
        assert "register_count" not in list(metrics)  # each metric is listed once, under its own name


def test_readme_flow_minimize_a_client_side_failure(daemon, monkeypatch):
    # Item 9: fuzz_op_client_side, then minimize(seed) on the same client, no run_op repeated.
    monkeypatch.chdir(daemon.project)
    monkeypatch.setenv("GPUEMU_HOME", str(daemon.home))

    def my_softmax_bug(inputs):
        x = inputs["x"].astype(np.float64)
        e = np.exp(x - x.max(-1, keepdims=True))
        return (e / e.sum(-1, keepdims=True) + 1e-3).astype(np.float32)

    client = Client()
    results = client.fuzz_op_client_side("softmax_client", run_op=my_softmax_bug, iterations=4, seed=11,
                                         dtypes=["float32"], value_distribution="regular")
    assert results.failed > 0
    small = client.minimize(results.failures[0].seed, max_iters=40)
    assert small.result.kind == "mismatch" and small.minimized_shape == (1, 1), small
    with pytest.raises(DaemonError, match=r"run_op=") as err:
        Client().minimize(results.failures[0].seed, max_iters=5)  # another client: nothing remembered
    assert "runs on the client" in str(err.value)


def test_the_readme_licence_is_in_the_files_and_the_metadata(tmp_path):
    # Item 15: readme.txt says "Dual-licensed under MIT or Apache 2.0 at your option".
    root = Path(__file__).resolve().parents[2]
    mit = (root / "LICENSE-MIT").read_text()
    assert mit.startswith("MIT License") and "Copyright (c) 2026 The gpuemu authors" in mit
    apache = (root / "LICENSE-APACHE").read_text()
    assert "Apache License" in apache and "Version 2.0, January 2004" in apache
    assert json.loads((root / "vscode" / "package.json").read_text())["license"] == "(MIT OR Apache-2.0)"
    # The wheel's metadata, as pip would build it from python/pyproject.toml.
    code = ("import sys\nfrom setuptools import build_meta\n"
            "print(build_meta.prepare_metadata_for_build_wheel(sys.argv[1]))\n")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=root / "python", capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    metadata = (tmp_path / proc.stdout.split()[-1] / "METADATA").read_text()
    assert "License-Expression: MIT OR Apache-2.0" in metadata


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
