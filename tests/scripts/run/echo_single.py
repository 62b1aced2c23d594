# Test script: replies with one tensor (x * 2 as float64) in the plain protocol, without gpuemu helpers.
import base64, json, sys
import numpy as np

req = json.load(sys.stdin)
x = req["inputs"]["x"]
arr = np.lib.stride_tricks.as_strided(
    np.frombuffer(base64.b64decode(x["data"]), dtype=x["dtype"]),
    shape=x["shape"], strides=[s * np.dtype(x["dtype"]).itemsize for s in x["strides"]])
out = (arr.astype(np.float64) * 2 * req["kwargs"].get("scale", 1))
print(json.dumps({"shape": list(out.shape), "dtype": "float64",
                  "data": base64.b64encode(np.ascontiguousarray(out).tobytes()).decode()}))
