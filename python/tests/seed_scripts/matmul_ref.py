# faq.txt's reference script ("What is a reference script?"), copied as written: users copy it.
# Its top level reads stdin, so gpuemu must run it as a process in every mode (issue 31, item 2).
import json, base64, sys
import numpy as np

def decode_tensor(encoded):
    data = base64.b64decode(encoded["data"])
    return np.frombuffer(data, dtype=np.dtype(encoded["dtype"])).reshape(encoded["shape"])

def encode_tensor(arr):
    return {
        "data": base64.b64encode(arr.tobytes()).decode("ascii"),
        "dtype": str(arr.dtype),
        "shape": list(arr.shape),
    }

request = json.loads(sys.stdin.read())
a = decode_tensor(request["inputs"]["a"])
b = decode_tensor(request["inputs"]["b"])
result = np.matmul(a, b)
json.dump({"outputs": {"result": encode_tensor(result)}}, sys.stdout)
