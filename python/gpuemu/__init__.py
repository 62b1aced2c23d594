# The gpuemu Python package's public facade: exactly the names docs/python-api.md lists under
# "What `gpuemu` exports" (python/tests/test_public_api.py holds the two equal).
"""gpuemu: a GPU-less correctness gate for deep-learning kernels.

Public: the names below, and the modules docs/python-api.md documents (gpuemu.errors,
gpuemu.results, gpuemu.frameworks, gpuemu.script, gpuemu.testing, gpuemu.tolerances,
gpuemu.validate, gpuemu.validation). Everything under gpuemu._internal is implementation.
"""

from gpuemu._internal import moved
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
from gpuemu._internal.core.layouts import with_layout
from gpuemu._internal.core.rng import SeededRng, derive_seed, generate_seed
from gpuemu._internal.core.tolerance import ToleranceConfig, ToleranceProfile, get_recommended_tolerance
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
from gpuemu.results import (
    FuzzConfig,
    FuzzResults,
    MinimizeResult,
    ReproduceResult,
    ReproductionInfo,
    TestCase,
    ValidationResult,
)
from gpuemu.tolerances import calibrate_tolerance

# Imports written against earlier docs (gpuemu.client.Client, gpuemu.core.fuzzing, gpuemu.wire.tensors)
# keep working: those names now answer with the modules under gpuemu._internal.
moved.install()

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
    "FuzzConfig",
    "FuzzResults",
    "MinimizeResult",
    "ReproduceResult",
    "ReproductionInfo",
    "TestCase",
    "ValidationResult",
    "SeededFuzzer",
    "fuzz_dtypes",
    "fuzz_dtypes_seeded",
    "fuzz_layouts",
    "fuzz_layouts_seeded",
    "fuzz_shapes",
    "fuzz_shapes_seeded",
    "generate_random_tensor",
    "with_layout",
    "SeededRng",
    "derive_seed",
    "generate_seed",
    "ToleranceConfig",
    "ToleranceProfile",
    "calibrate_tolerance",
    "get_recommended_tolerance",
]
