# configuration.txt's op "matmul" (module = "my_project.ops.matmul"): its one input x times a fixed
# n x n exchange matrix (shape_preserved holds; the products are exact, so every dtype agrees).
import torch


def matmul(inputs, **kwargs):
    x = inputs["x"]
    exchange = torch.flip(torch.eye(x.shape[-1], dtype=torch.float32), [0])
    return (x.to(torch.float32) @ exchange).to(x.dtype)
