# The gpuemu Python package's public facade: exactly the names docs/python-api.md lists under
# "What `gpuemu` exports" (python/tests/test_public_api.py holds the two equal).
"""gpuemu: a GPU-less correctness gate for deep-learning kernels.

Public: the names below, and the modules docs/python-api.md documents (gpuemu.errors,
gpuemu.results, gpuemu.frameworks, gpuemu.script, gpuemu.testing, gpuemu.tolerances,
gpuemu.validate, gpuemu.validation). Everything under gpuemu._internal is implementation.
"""

import importlib
from typing import Any

from gpuemu._internal import moved

# Where each public name lives. They are imported when first asked for (PEP 562): a warm worker and
# the fork server import `gpuemu` for its submodules only, and the client behind these names took
# 50-100 ms of every run's start (docs/performance.md, (j)).
_HOMES = {
    "Client": "gpuemu._internal.client.client",
    "SeededFuzzer": "gpuemu._internal.client.seeded_fuzzer",
    "validate_op": "gpuemu._internal.client.validate",
    **dict.fromkeys(["fuzz_dtypes", "fuzz_dtypes_seeded", "fuzz_layouts", "fuzz_layouts_seeded", "fuzz_shapes",
                     "fuzz_shapes_seeded", "generate_random_tensor"], "gpuemu._internal.core.fuzz.generators"),
    "with_layout": "gpuemu._internal.core.layouts",
    **dict.fromkeys(["SeededRng", "derive_seed", "generate_seed"], "gpuemu._internal.core.rng"),
    **dict.fromkeys(["ToleranceConfig", "ToleranceProfile", "get_recommended_tolerance"],
                    "gpuemu._internal.core.tolerance"),
    **dict.fromkeys(["ClientError", "DaemonError", "DaemonNotRunningError", "GpuemuError", "ProtocolMismatchError",
                     "RequestTimeoutError", "ValidationError"], "gpuemu.errors"),
    "case_dtype": "gpuemu.frameworks",
    **dict.fromkeys(["FuzzConfig", "FuzzResults", "MinimizeResult", "ReproduceResult", "ReproductionInfo", "TestCase",
                     "ValidationResult"], "gpuemu.results"),
    "calibrate_tolerance": "gpuemu.tolerances",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'gpuemu' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # asked once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


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
