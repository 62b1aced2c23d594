"""Op under test that ignores strides and reads the raw buffer row-major: wrong for real layouts."""
import base64
import json
import sys

import numpy as np

import _proto

request = json.loads(sys.stdin.read())
t = request["inputs"]["x"]
flat = np.frombuffer(base64.b64decode(t["data"]), dtype=np.dtype(t["dtype"]))
n = int(np.prod(t["shape"]))
_proto.write(flat[:n].reshape(t["shape"]).copy())
