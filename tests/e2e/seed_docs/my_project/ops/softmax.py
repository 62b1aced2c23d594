# configuration.txt's op "softmax" (module = "my_project.ops.softmax"): softmax over the last axis,
# computed in float32 and returned in the input's dtype.
import torch


def softmax(inputs, **kwargs):
    x = inputs["x"]
    return torch.softmax(x.to(torch.float32), dim=-1).to(x.dtype)
