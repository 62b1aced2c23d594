"""Op under test: x + 1e-3 in float32, one output (named "out" by the protocol): off by far more
than float32 rounding, which a calibration must measure, not skip."""
import _proto

x, _, _ = _proto.read()
_proto.write(x["x"].astype("float32") + 1e-3)
