# configuration.txt's op "layernorm" (module = "my_project.ops.layernorm"): layer norm over the last
# axis without affine weights, computed in float32 and returned in the input's dtype.
import torch


def layernorm(inputs, **kwargs):
    x = inputs["x"]
    y = x.to(torch.float32)
    return torch.nn.functional.layer_norm(y, y.shape[-1:], eps=1e-5).to(x.dtype)
