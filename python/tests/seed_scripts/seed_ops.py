# module:function ops for the seed-document tests: a matmul that returns one tensor (named "out")
# against the FAQ's reference, which names its output "result"; the buggy twin must fail.
import numpy as np


def matmul(inputs):
    return (inputs["a"].astype(np.float64) @ inputs["b"].astype(np.float64)).astype(inputs["a"].dtype)


def matmul_bug(inputs):
    return (inputs["a"].astype(np.float64) @ inputs["b"].astype(np.float64) * 1.1).astype(inputs["a"].dtype)
