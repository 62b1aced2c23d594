"""Op under test that drops the last row: a shape mismatch, never a numerical pass."""
import _proto

inputs, _, _ = _proto.read()
_proto.write(inputs["x"][:-1].copy() if inputs["x"].shape[0] > 1 else inputs["x"].reshape(-1)[:0].copy())
