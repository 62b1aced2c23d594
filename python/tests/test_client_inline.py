# The client with no daemon: clear errors for daemon-only requests (fast, not a timeout), and
# client-side validation and fuzzing evaluated inline from gpuemu.toml (DESIGN section 2).
import os
import re
import textwrap
import time

import numpy as np
from pathlib import Path

import pytest

from gpuemu import Client, ClientError, DaemonNotRunningError, ValidationError, validate_op
from gpuemu.validate import validate_op as validate_op_alias

REPO_ROOT = Path(__file__).resolve().parents[2]

TOML = """
[project]
name = "inline"

[validation]
dtypes = ["float32"]
python_path = ["src"]

[[ops]]
name = "relu"
reference = "myrefs.ops:relu_reference"
execution_mode = "client_side"

[ops.inputs.x]
shape = [8, 33]
domain = [-3, 3]

[[ops]]
name = "layer_scale"
reference = "myrefs.ops:scale_reference"
execution_mode = "client_side"
kwargs = { factor = 2.0 }

[ops.tolerances]
float32 = { atol = 1e-3 }
"""

REFS = """
import numpy as np

def relu_reference(inputs, **kwargs):
    return np.maximum(np.asarray(inputs["x"], dtype=np.float64), 0.0)

def scale_reference(inputs, factor=1.0, **kwargs):
    return np.asarray(inputs["x"], dtype=np.float64) * factor
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "gpuemu.toml").write_text(TOML)
    pkg = tmp_path / "src" / "myrefs"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "ops.py").write_text(textwrap.dedent(REFS))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GPUEMU_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def relu(inputs):
    return np.maximum(inputs["x"], 0)


def test_daemon_only_requests_fail_fast_with_what_to_do(project):
    client = Client(timeout_ms=60000)
    assert client.socket_path == str(project / "home" / "gpuemu.sock")
    start = time.perf_counter()
    for call in (client.ping, client.list_results, client.list_failures, lambda: client.reproduce(2**64 - 1),
                 lambda: client.fuzz_op("relu", iterations=1), lambda: client.lint_kernel(".version 8.0\n")):
        with pytest.raises(DaemonNotRunningError, match="gpuemu daemon start --background"):
            call()
    assert time.perf_counter() - start < 5, "no daemon must be reported at once, not after timeout_ms"
    # A stale socket file (a daemon killed with -9) is the same error.
    (project / "home").mkdir()
    (project / "home" / "gpuemu.sock").write_text("")
    with pytest.raises(DaemonNotRunningError):
        Client().ping()
    with pytest.raises(DaemonNotRunningError):
        Client(inline=False).validate_op("relu", {"x": np.ones((2, 2), np.float32)}, np.ones((2, 2), np.float32))


def test_validate_op_inline_passes_and_fails(project):
    x = np.linspace(-2, 2, 64, dtype=np.float32).reshape(8, 8)
    with Client() as client:
        ok = client.validate_op("relu", {"x": x}, relu({"x": x}), seed=2**64 - 2)
        assert ok.passed and ok.seed == 2**64 - 2 and ok.op_name == "relu" and ok.dtype == "float32"
        assert ok.max_diff == 0 and ok.failures == []
        bad = client.validate_op("relu", {"x": x}, relu({"x": x}) + np.float32(1e-3))
        assert not bad.passed and bad.kind == "mismatch" and bad.max_diff == pytest.approx(1e-3, rel=1e-3)
        assert "outside atol=1e-05" in bad.failures[0]["message"] and bad.repro_info.shape == (8, 8)
        scaled = client.validate_op("layer_scale", {"x": x}, x * 2 + np.float32(5e-4))
        assert scaled.passed, "op kwargs reach the reference and [ops.tolerances] atol is used"
        nan = client.validate_op("relu", {"x": x}, np.full_like(x, np.nan))
        assert nan.kind == "unexpected_nonfinite"
        with pytest.raises(Exception, match="did you mean 'relu'"):
            client.validate_op("rleu", {"x": x}, x)


def test_validate_op_context_manager_both_spellings(project):
    x = np.random.default_rng(0).standard_normal((4, 64)).astype(np.float32)
    with validate_op("relu", inputs={"x": x}) as ctx:
        ctx.set_output(relu({"x": x}))
    assert ctx.result.passed
    client = Client()
    with pytest.raises(ValidationError) as err:
        with validate_op_alias(client, "relu", inputs={"x": x}) as ctx:
            ctx["output"] = -relu({"x": x}) - 1
    assert err.value.result.kind == "mismatch" and not ctx.result.passed
    with validate_op(client, "relu", inputs={"x": x}, raise_on_failure=False) as ctx:
        ctx["output"] = x
    assert not ctx.result.passed
    with pytest.raises(ZeroDivisionError):
        with validate_op(client, "relu", inputs={"x": x}):
            1 / 0


def test_validate_op_block_that_writes_its_input_is_input_mutated_inline(project):
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    with validate_op("relu", inputs={"x": x}, raise_on_failure=False) as ctx:
        out = relu({"x": x})
        x[2, 1] = 9
        ctx.set_output(out)
    assert ctx.result.kind == "input_mutated" and not ctx.result.passed
    assert "wrote into its input 'x': 1 element changed, the first at x[2, 1]" in ctx.result.failures[0].message
    with validate_op("relu", inputs={"x": x}) as ctx:  # the correct twin passes
        ctx.set_output(relu({"x": x}))
    assert ctx.result.passed


def test_test_cases_and_client_side_fuzz_inline(project):
    client = Client()
    case = client.get_test_case("relu", seed=2**63 + 11)
    assert case["inputs"]["x"].shape == (8, 33) and case["shape"] == (8, 33)
    assert case["inputs"]["x"].min() >= -3 and case["inputs"]["x"].max() <= 3
    assert client.submit_output("relu", case["inputs"], relu(case["inputs"]), seed=case["seed"]).passed
    again = client.get_test_batch("relu", count=3, seed=2**63 + 11)
    assert again[0]["seed"] == case["seed"] and np.array_equal(again[0]["inputs"]["x"], case["inputs"]["x"])
    assert len({c["seed"] for c in again}) == 3

    good = client.fuzz_op_client_side("relu", run_op=relu, iterations=10, seed=7)
    assert (good.total, good.passed, good.failed, good.seed) == (10, 10, 0, 7)

    def leaky(inputs):  # wrong for negative inputs
        return np.where(inputs["x"] > 0, inputs["x"], inputs["x"] * np.float32(0.01))

    bad = client.fuzz_op_client_side("relu", run_op=leaky, iterations=10, seed=7)
    assert bad.failed > 0 and bad.failures[0].kind == "mismatch"

    def in_place(inputs):
        np.maximum(inputs["x"], 0, out=inputs["x"])
        return inputs["x"].copy()

    mutated = client.fuzz_op_client_side("relu", run_op=in_place, iterations=3, seed=7)
    assert mutated.failed == 3 and {f.kind for f in mutated.failures} == {"input_mutated"}
    aliased = client.fuzz_op_client_side("relu", run_op=lambda i: i["x"], iterations=2, seed=7, fail_fast=True)
    assert aliased.total == 1 and aliased.failures[0].kind == "output_aliased"

    schema = {"name": "relu", "dims": [{"name": "M", "candidates": [1, 5]}, {"name": "N", "candidates": [7]}],
              "inputs": [{"name": "x", "dims": ["M", "N"]}], "output": {"name": "out", "dims": ["M", "N"]}}
    shaped = client.get_test_batch("relu", count=6, seed=3, op_schema=schema)
    assert {c["shape"] for c in shaped} <= {(1, 7), (5, 7)}


def test_inline_runs_the_bundled_example_references(monkeypatch, tmp_path):
    monkeypatch.chdir(REPO_ROOT / "examples")
    monkeypatch.setenv("GPUEMU_HOME", str(tmp_path))
    client = Client()
    case = client.get_test_case("softmax", seed=12345)
    x = case["inputs"]["x"].astype(np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    result = client.submit_output("softmax", case["inputs"], e / e.sum(axis=-1, keepdims=True), seed=case["seed"])
    assert result.passed, result.failures
    assert os.environ.get("GPUEMU_HOME") == str(tmp_path)


def test_client_side_fuzz_honours_the_op_timeout(project):
    # A run_op that never returns must not hang the caller: the op's timeout ([validation] timeout
    # here, overridden per call) ends the case as a timed-out op_error and the run stops there.
    client = Client()
    release = __import__("threading").Event()

    def hangs_on_third(inputs, calls=[]):
        calls.append(1)
        if len(calls) == 3:
            release.wait(600)
        return relu(inputs)

    started = time.monotonic()
    results = client.fuzz_op_client_side("relu", run_op=hangs_on_third, iterations=10, seed=7, timeout=0.5)
    elapsed = time.monotonic() - started
    release.set()
    assert elapsed < 10, f"fuzz_op_client_side took {elapsed:.1f} s with a 0.5 s timeout"
    assert (results.total, results.passed, results.failed) == (3, 2, 1)
    (timeout,) = results.failures
    assert timeout.kind == "op_error" and "timed out after 0.5 s" in timeout.failures[0]["message"]
    # The reported inputs are the case's own, not whatever the abandoned call may write into.
    assert timeout.repro_info.input_snapshot["x"]["shape"] == [8, 33]


def test_client_side_fuzz_takes_the_op_timeout_from_the_config(project):
    with open("gpuemu.toml", "a") as f:
        f.write("")  # the project's [validation] has no timeout: the default (60 s) applies
    from gpuemu._internal.client.run_cases import op_timeout

    client = Client()
    assert op_timeout(client, "relu") == 60.0
    text = Path("gpuemu.toml").read_text().replace("[validation]\n", "[validation]\ntimeout = 7\n", 1)
    text = text.replace('name = "layer_scale"\n', 'name = "layer_scale"\ntimeout = 2.5\n', 1)
    Path("gpuemu.toml").write_text(text)
    client = Client()
    assert op_timeout(client, "relu") == 7.0 and op_timeout(client, "layer_scale") == 2.5


@pytest.mark.parametrize("values", ["adversarial", "boundary", "regular"])
def test_client_side_fuzz_with_a_value_distribution(project, values):
    client = Client()
    seen = []

    def record(inputs):
        seen.append(inputs["x"].copy())
        return relu(inputs)

    results = client.fuzz_op_client_side("relu", run_op=record, iterations=6, seed=11, value_distribution=values)
    assert (results.total, results.passed) == (6, 6)
    batch = client.get_test_batch("relu", count=6, seed=11)  # the mixed stream differs
    from gpuemu._internal.client.run_cases import inline_batch

    same = inline_batch(client._project(), "relu", 6, 11, None, None, values=values)
    assert {c["distribution"] for c in same} == {values}
    assert all(np.array_equal(a, c["inputs"]["x"], equal_nan=True) for a, c in zip(seen, same))
    assert len(batch) == 6
    with pytest.raises(Exception, match="not regular, boundary, adversarial or mixed"):
        client.fuzz_op_client_side("relu", run_op=relu, iterations=1, seed=1, value_distribution="spicy")


def test_the_documented_default_value_distribution_is_the_one_that_runs(project):
    # The seed README called "adversarial" the recommended default; DESIGN's default mixes all three.
    # README.md and docs/python-api.md must state the default the signature has and the run uses.
    import inspect  # lazy: only this test reads a signature

    readme = (REPO_ROOT / "README.md").read_text()
    [stated] = re.findall(r'`value_distribution="(\w+)"` \(the default', readme)
    api = (REPO_ROOT / "docs" / "python-api.md").read_text()
    [row] = [line for line in api.splitlines() if line.startswith("| `fuzz_op_client_side(")]
    default = inspect.signature(Client.fuzz_op_client_side).parameters["value_distribution"].default
    assert stated == default == "mixed" and f'value_distribution="{default}"' in row
    assert f"`\"{default}\"` (the default" in row
    client = Client()
    runs = {}
    for values in ("default", "mixed", "adversarial"):
        seen = []

        def record(inputs):
            seen.append(inputs["x"].copy())
            return relu(inputs)

        extra = {} if values == "default" else {"value_distribution": values}
        assert client.fuzz_op_client_side("relu", run_op=record, iterations=9, seed=3, **extra).passed == 9
        runs[values] = seen
    same = lambda a, b: all(np.array_equal(x, y, equal_nan=True) for x, y in zip(a, b))  # noqa: E731
    assert same(runs["default"], runs["mixed"]) and not same(runs["default"], runs["adversarial"])
    from gpuemu._internal.client.run_cases import inline_batch  # lazy: the cases the default drew

    drawn = {c["distribution"] for c in inline_batch(client._project(), "relu", 9, 3, None, None, values=default)}
    assert drawn == {"regular", "boundary", "adversarial"}


def test_client_side_failures_carry_truthful_repro_info(project):
    client = Client()

    def leaky(inputs):
        return np.where(inputs["x"] > 0, inputs["x"], inputs["x"] * np.float32(0.01))

    text = Path("gpuemu.toml").read_text().replace('execution_mode = "client_side"\n',
                                                   'execution_mode = "client_side"\nlayouts = ["transposed"]\n', 1)
    Path("gpuemu.toml").write_text(text)
    client = Client()
    bad = client.fuzz_op_client_side("relu", run_op=leaky, iterations=4, seed=5, dtypes=["float16"])
    assert bad.failed > 0
    info = bad.failures[0].repro_info
    case = client.get_test_batch("relu", count=1, seed=5, dtypes=["float16"])[0]
    assert info.layout == "transposed" and info.strides == (1, 8)  # x[8, 33] stored column-major
    assert info.dtype == "float16" and info.fuzz_config.dtypes == ["float16"]
    assert info.fuzz_config.layouts == ["transposed"]
    assert (info.fuzz_config.seed, info.fuzz_config.iterations) == (5, 4)
    snapshot = info.input_snapshot["x"]
    assert snapshot["shape"] == [8, 33] and snapshot["dtype"] == "float16"
    from gpuemu._internal.wire import tensors

    failing = next(c for c in client.get_test_batch("relu", count=4, seed=5, dtypes=["float16"])
                   if c["seed"] == bad.failures[0].seed)
    assert np.array_equal(tensors.decode_tensor(snapshot), failing["inputs"]["x"])
    assert case["layout"] == "transposed"


def test_inline_holds_reference_and_op_to_the_declared_output_shape(project):
    # A reference that flattens its output, and an op that does the same: equal to each other, both
    # of the wrong shape. shape_preserved (and a schema's output) catch it, as the C++ side does.
    # A top-level module of its own: `myrefs` is already imported from another test's project.
    (project / "src" / "flatrefs.py").write_text(
        "import numpy as np\n\ndef flat_reference(inputs, **kwargs):\n"
        "    return np.asarray(inputs['x'], dtype=np.float64).reshape(-1)\n")
    with open(project / "gpuemu.toml", "a") as f:
        f.write('\n[[ops]]\nname = "flat"\nreference = "flatrefs:flat_reference"\nexecution_mode = "client_side"\n'
                'invariants = ["shape_preserved"]\n\n[[ops]]\nname = "flat_schema"\n'
                'reference = "flatrefs:flat_reference"\nexecution_mode = "client_side"\n\n[ops.schema]\n'
                'dims = { M = [1, 8], N = [1, 8] }\ninputs = { x = ["M", "N"] }\noutput = ["M", "N"]\n')
    client = Client()
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    for op, source in (("flat", "the first input 'x' (shape_preserved)"), ("flat_schema", "[ops.schema] output")):
        result = client.validate_op(op, {"x": x}, x.reshape(-1).copy())
        assert not result.passed and result.kind == "reference_error", (op, result.failures)
        assert source in result.failures[0]["message"] and "[12]" in result.failures[0]["message"]
    # Without a schema, the message shows the whole [ops.schema] pinning x's shape (as the C++ side).
    hint = client.validate_op("flat", {"x": x}, x.reshape(-1).copy()).failures[0]["message"]
    assert ("dims = { D0 = { candidates = [3] }, D1 = { candidates = [4] } }\ninputs = { x = [\"D0\", \"D1\"] }\n"
            "output = [12]") in hint, hint
    # An op of the right shape against that reference fails too (the reference cannot judge).
    assert client.validate_op("flat", {"x": x}, x.copy()).kind == "reference_error"
def test_inline_names_the_schema_to_declare_for_default_shapes_and_reductions(project):
    # Issue 41: two inputs with no shapes would both be [4, 64] (a matmul's cannot agree): no case is
    # made, and the error names [ops.schema] with the lines to write. A row reduction under
    # shape_preserved is told which `output = [...]` to declare.
    (project / "src" / "rowrefs.py").write_text(
        "import numpy as np\n\ndef row_sum(inputs, **kwargs):\n"
        "    return np.asarray(inputs['x'], dtype=np.float64).sum(-1)\n")
    with open(project / "gpuemu.toml", "a") as f:
        f.write('\n[[ops]]\nname = "mm"\nreference = "myrefs.ops:relu_reference"\ninput_names = ["a", "b"]\n'
                'execution_mode = "daemon_orchestrated"\n\n[[ops]]\nname = "add"\n'
                'reference = "myrefs.ops:relu_reference"\ninput_names = ["a", "b"]\nexecution_mode = "client_side"\n'
                '\n[ops.inputs.a]\nshape = [4, 64]\n\n[[ops]]\nname = "rowsum"\nreference = "rowrefs:row_sum"\n'
                'execution_mode = "client_side"\ninvariants = ["shape_preserved"]\n\n[ops.schema]\n'
                'dims = { M = [1, 8], N = [9, 16] }\ninputs = { x = ["M", "N"] }\n')
    client = Client()
    for call in (lambda: client.get_test_case("mm", seed=1),
                 lambda: client.fuzz_op_client_side("mm", run_op=lambda i: i["a"] @ i["b"], iterations=1)):
        with pytest.raises(ClientError, match=r"op 'mm' has no \[ops.schema\], so each of its inputs \(a, b\)") as err:
            call()
        assert 'inputs = { a = ["M", "K"], b = ["K", "N"] }\noutput = ["M", "N"]' in str(err.value)
    assert client.get_test_case("add", seed=1)["inputs"]["b"].shape == (4, 64)  # a declared shape: cases made
    x = np.ones((3, 10), np.float32)
    reduced = client.validate_op("rowsum", {"x": x}, x.sum(-1))
    assert reduced.kind == "reference_error", reduced.failures
    message = reduced.failures[0]["message"]
    assert "reference output 'out' has shape [3]" in message and "op 'rowsum'" in message
    assert 'add output = ["M"] under the op\'s [ops.schema]' in message, message


def test_inline_ops_inherit_through_extends(tmp_path):
    from gpuemu._internal.client.inline import InlineProject

    (tmp_path / "gpuemu.toml").write_text(TOML + """
[[ops]]
name = "loose_scale"
extends = "layer_scale"

[ops.tolerances]
float32 = { rtol = 0.5 }

[[ops]]
name = "cycle"
extends = "cycle"
reference = "myrefs.ops:relu_reference"
execution_mode = "client_side"
""")
    project = InlineProject(tmp_path / "gpuemu.toml")
    # The reference, kwargs and execution mode come from layer_scale; atol too, rtol is overridden.
    assert project.op("loose_scale").reference == "myrefs.ops:scale_reference"
    tol = project.tolerance("loose_scale", "float32")
    assert (tol.atol, tol.rtol) == (1e-3, 0.5)
    assert project._tables["loose_scale"]["kwargs"] == {"factor": 2.0}
    assert project._tables["loose_scale"]["name"] == "loose_scale"
    # A cycle is the binary's to diagnose; inline keeps the table as written.
    assert project.op("cycle").reference == "myrefs.ops:relu_reference"
