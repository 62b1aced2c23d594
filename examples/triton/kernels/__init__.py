# Real @triton.jit kernels launched with torch tensors, each beside a buggy twin (README.md).
