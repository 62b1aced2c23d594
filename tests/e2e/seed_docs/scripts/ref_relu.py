# Reference of execution-modes.txt's my_relu (client-side mode): ReLU in float64, over the
# documents' stdin/stdout protocol.
import numpy as np
from _doc_protocol import serve

if __name__ == "__main__":
    serve(lambda x: np.maximum(x, 0))
