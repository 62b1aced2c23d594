# The gpuemu Python package: seeded values and the tensor codec now; client, worker and script
# helpers are added by their owners. Names exported here are the public API.
"""gpuemu: a GPU-less correctness gate for deep-learning kernels."""

from gpuemu.rng import SeededRng, derive_seed, generate_seed
from gpuemu.tensors import decode_raw, decode_tensor, encode_raw, encode_tensor, numpy_dtype
from gpuemu.values import describe_values, generate_tensor

__all__ = [
    "SeededRng",
    "derive_seed",
    "generate_seed",
    "generate_tensor",
    "describe_values",
    "numpy_dtype",
    "decode_tensor",
    "decode_raw",
    "encode_tensor",
    "encode_raw",
]
