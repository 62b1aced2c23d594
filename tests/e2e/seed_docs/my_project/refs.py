# configuration.txt's reference "my_project.refs:layernorm_reference": layer norm over the last
# axis in float64 numpy (references stay high precision).
import numpy as np


def layernorm_reference(inputs, **kwargs):
    x = np.asarray(inputs["x"], dtype=np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5)
