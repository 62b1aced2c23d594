# Reference of configuration.txt's matmul and matmul_kernel: x times the n x n exchange matrix
# (see my_project/ops/matmul.py) in float64, over the documents' stdin/stdout protocol.
import numpy as np
from _doc_protocol import serve

if __name__ == "__main__":
    serve(lambda x: x @ np.flip(np.eye(x.shape[-1]), 0))
