"""Op under test with a tail bug: the last column is wrong when N is not a multiple of 16."""
import _proto

x, _, _ = _proto.read()
out = x["x"].copy()
if out.shape[-1] % 16:
    out[..., -1] += 1.0
_proto.write(out)
