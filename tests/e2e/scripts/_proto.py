"""Minimal script-protocol codec for the e2e test scripts, independent of the gpuemu package.

Reads the request from stdin and writes replies, so tests exercise the raw protocol.
"""
import base64
import json
import sys

import numpy as np


def read():
    request = json.loads(sys.stdin.read())
    inputs = {}
    for name, t in request["inputs"].items():
        dtype = np.dtype(t["dtype"])
        buf = np.frombuffer(base64.b64decode(t["data"]), dtype=dtype)
        strides = [s * dtype.itemsize for s in t.get("strides") or []] or None
        inputs[name] = np.lib.stride_tricks.as_strided(buf, shape=t["shape"], strides=strides) if strides else buf.reshape(t["shape"])
    return inputs, request.get("kwargs", {}), request.get("dtype")


def tensor(arr):
    arr = np.ascontiguousarray(arr)
    return {"shape": list(arr.shape), "dtype": arr.dtype.name, "data": base64.b64encode(arr.tobytes()).decode()}


def write(arr):
    sys.stdout.write(json.dumps(tensor(arr)))
