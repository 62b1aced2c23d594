# The decode/encode helpers of execution-modes.txt's op script, shared by the references below:
# they answer one tensor, as the documents' op script does.
import base64
import json
import sys

import numpy as np


def decode_tensor(tensor_dict):
    shape = tensor_dict["shape"]
    dtype = np.dtype(tensor_dict["dtype"])
    data = base64.b64decode(tensor_dict["data"])
    return np.frombuffer(data, dtype=dtype).reshape(shape)


def encode_tensor(arr):
    return {
        "shape": list(arr.shape),
        "dtype": str(arr.dtype),
        "data": base64.b64encode(arr.tobytes()).decode("utf-8"),
    }


def serve(compute):
    payload = json.load(sys.stdin)
    inputs = {name: decode_tensor(t).astype(np.float64) for name, t in payload["inputs"].items()}
    json.dump(encode_tensor(np.ascontiguousarray(compute(**inputs))), sys.stdout)
