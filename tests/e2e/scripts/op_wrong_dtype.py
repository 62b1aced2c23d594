"""Op under test that answers float64 for a float32 case: a dtype mismatch."""
import _proto

inputs, _, _ = _proto.read()
_proto.write(inputs["x"].astype("float64"))
