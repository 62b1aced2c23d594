# configuration.txt's [policies] warn_threshold in the client's inline mode (no daemon), as the
# daemon's validate reply carries it: a pass close to failing warns, a clear pass does not.
# (The reference module has a name of its own: inline mode imports it into this process, where another
# test may have imported a different `refs` already.)
import numpy as np
import pytest

from gpuemu import Client

TOML = """
[project]
name = "inline-warn"

[validation]
dtypes = ["float32"]
python_path = ["."]

[policies]
warn_threshold = 0.8

[[ops]]
name = "relu"
reference = "warn_threshold_refs:relu_reference"
execution_mode = "client_side"
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "gpuemu.toml").write_text(TOML)
    (tmp_path / "warn_threshold_refs.py").write_text("import numpy as np\n\n\ndef relu_reference(inputs, **kwargs):\n"
                                      "    return np.maximum(np.asarray(inputs['x'], dtype=np.float64), 0.0)\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GPUEMU_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def test_inline_validate_warns_past_warn_threshold(project):
    x = np.linspace(0.5, 2, 64, dtype=np.float32).reshape(8, 8)
    ref = np.maximum(x.astype(np.float64), 0)
    client = Client()
    near = client.validate_op("relu", {"x": x}, (ref + 0.9 * (1e-5 + 1e-5 * ref)).astype(np.float32), seed=5)
    assert near.passed and len(near.warnings) == 1
    assert near.warnings[0].startswith("relu [float32] passed but used 9") and "warn_threshold 80%" in near.warnings[0]
    clear = client.validate_op("relu", {"x": x}, (ref + 0.5 * (1e-5 + 1e-5 * ref)).astype(np.float32))
    assert clear.passed and clear.warnings == []
    failing = client.validate_op("relu", {"x": x}, (ref + 1.5 * (1e-5 + 1e-5 * ref)).astype(np.float32))
    assert not failing.passed and failing.warnings == []


def test_inline_validate_passes_an_empty_output_of_the_right_shape(project):
    x = np.zeros((0, 8), dtype=np.float32)
    client = Client()
    assert client.validate_op("relu", {"x": x}, np.maximum(x, 0)).passed
    wrong = client.validate_op("relu", {"x": x}, np.zeros((1, 8), np.float32))
    assert not wrong.passed and wrong.kind == "shape_mismatch"
