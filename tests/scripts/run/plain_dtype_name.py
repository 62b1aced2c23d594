# Test script: the seed documents' plain protocol, np.dtype(t["dtype"]) in and str(arr.dtype) out, so a
# bfloat16 case works only when numpy knows the name (gpuemu/script_startup, docs/script-protocol.md).
import base64, json, sys
import numpy as np

req = json.load(sys.stdin)
x = req["inputs"]["x"]
arr = np.frombuffer(base64.b64decode(x["data"]), dtype=np.dtype(x["dtype"])).reshape(x["shape"])
out = arr * 2
hooked = np.array([any(p.endswith("script_startup") for p in sys.path)], np.bool_)
print(json.dumps({"outputs": {
    "out": {"shape": list(out.shape), "dtype": str(out.dtype), "data": base64.b64encode(out.tobytes()).decode()},
    "hooked": {"shape": [1], "dtype": "bool", "data": base64.b64encode(hooked.tobytes()).decode()}}}))
