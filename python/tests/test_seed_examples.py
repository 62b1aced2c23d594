# The Python examples of the seed documents (python-api.txt, execution-modes.txt), run as written
# against a real daemon; only op names are ours (my_relu -> softmax_client, my_matmul -> matmul).
import textwrap

import pytest

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
