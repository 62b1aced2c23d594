# The Python examples of the seed documents (python-api.txt, execution-modes.txt, faq.txt), run as
# written against a real daemon, inline and the CLI; only op names (and counts) are ours.
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from gpuemu import Client, ClientError, DaemonError

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


FAQ_CALIBRATE = """
from gpuemu.tolerances import calibrate_tolerance

# Run multiple iterations and find the tightest tolerance that passes
recommended = calibrate_tolerance(client, "softmax", dtype="float32", iterations=20, seed=1)
print(recommended)  # {"atol": 2.5e-6, "rtol": 3.1e-6}
"""


def test_faq_calibrate_tolerance_call(daemon, monkeypatch, capsys):
    # Item 8: faq.txt's text (op, iteration count and seed ours: a fit whose re-check fails raises, so
    # the master seed is fixed); python-api.txt's form in test_tolerance.py.
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
