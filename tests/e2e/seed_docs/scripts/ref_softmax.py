# Reference of execution-modes.txt's my_softmax (script-based mode) and of configuration.txt's
# softmax: a softmax over the last axis in float64, over the documents' stdin/stdout protocol.
import numpy as np
from _doc_protocol import serve


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True)) if x.size else x
    return e / e.sum(axis=-1, keepdims=True) if x.size else x


if __name__ == "__main__":
    serve(softmax)
