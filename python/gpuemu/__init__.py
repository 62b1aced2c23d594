# The gpuemu Python package: the daemon client, client-side fuzzing and tolerance helpers, seeded
# values and the tensor codec. Names exported here are the public API (docs/python-api.md).
"""gpuemu: a GPU-less correctness gate for deep-learning kernels."""

from gpuemu._internal.client.client import Client
from gpuemu._internal.client.seeded_fuzzer import SeededFuzzer
from gpuemu._internal.client.validate import validate_op
from gpuemu._internal.core.fuzzing import (
    fuzz_dtypes,
    fuzz_dtypes_seeded,
    fuzz_layouts,
    fuzz_layouts_seeded,
    fuzz_shapes,
    fuzz_shapes_seeded,
    generate_random_tensor,
)
from gpuemu._internal.core.rng import SeededRng, derive_seed, generate_seed
from gpuemu._internal.core.tolerance import ToleranceConfig, ToleranceProfile, get_recommended_tolerance
from gpuemu._internal.core.values import describe_values, generate_tensor
from gpuemu.errors import (
    ClientError,
    DaemonError,
    DaemonNotRunningError,
    GpuemuError,
    ProtocolMismatchError,
    RequestTimeoutError,
    ValidationError,
)
from gpuemu.frameworks import case_dtype
from gpuemu.tolerances import calibrate_tolerance
from gpuemu.results import (
    FuzzConfig,
    FuzzResults,
    MinimizeResult,
    ReproduceResult,
    ReproductionInfo,
    TestCase,
    ValidationResult,
)
from gpuemu._internal.wire.tensors import decode_raw, decode_tensor, encode_raw, encode_tensor, numpy_dtype

__all__ = [
    "Client",
    "validate_op",
    "case_dtype",
    "GpuemuError",
    "ClientError",
    "DaemonError",
    "DaemonNotRunningError",
    "ProtocolMismatchError",
    "RequestTimeoutError",
    "ValidationError",
    "SeededFuzzer",
    "fuzz_dtypes",
    "fuzz_dtypes_seeded",
    "fuzz_layouts",
    "fuzz_layouts_seeded",
    "fuzz_shapes",
    "fuzz_shapes_seeded",
    "generate_random_tensor",
    "FuzzConfig",
    "FuzzResults",
    "MinimizeResult",
    "ReproduceResult",
    "ReproductionInfo",
    "TestCase",
    "ValidationResult",
    "SeededRng",
    "derive_seed",
    "generate_seed",
    "ToleranceConfig",
    "ToleranceProfile",
    "calibrate_tolerance",
    "get_recommended_tolerance",
    "generate_tensor",
    "describe_values",
    "numpy_dtype",
    "decode_tensor",
    "decode_raw",
    "encode_tensor",
    "encode_raw",
]
