"""float64 reference for the matmul ops: c = a @ b. Products and sums of fp16/bf16/fp32 inputs
in float64 are exact or within 1e-16 relative, far below any kernel tolerance.
"""

import numpy as np

from gpuemu.script import serve


def matmul_ref(inputs, **kwargs):
    a = np.asarray(inputs["a"], dtype=np.float64)
    b = np.asarray(inputs["b"], dtype=np.float64)
    return a @ b


serve(matmul_ref, role="reference")
