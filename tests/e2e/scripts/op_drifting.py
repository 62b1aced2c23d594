"""Op under test: an identity that is exact for its first 6 runs and then drifts (a counter file
next to the script): errors a calibration's fit never saw, which its re-check must catch."""
import pathlib

import _proto

counter = pathlib.Path(__file__).with_name("drift.count")
runs = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(runs + 1))
x, _, _ = _proto.read()
out = x["x"].astype("float32")
if runs >= 6:
    out = out + 0.25
_proto.write(out)
