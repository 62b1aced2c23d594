# What decides how one callable's tensors are converted: its framework, device and numpy bfloat16
# form, as the engine passes them (worker flags, cold request fields) or the client reads gpuemu.toml.
"""AdapterSettings, the names each field accepts, and check_settings() that explains a wrong one."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

__all__ = ["FRAMEWORKS", "DEVICES", "NUMPY_BFLOAT16_FORMS", "ROLES", "AdapterSettings", "check_choice"]

# "numpy" is the form every gpuemu release before adapters used; the other three are [project]
# framework values (docs/configuration.md). A mirror of src/config/framework.cpp's list, in its
# order: unit_config's FrameworkNames tests fail when the two differ.
FRAMEWORKS = ("numpy", "pytorch", "jax", "tensorflow")
DEVICES = ("auto", "cpu", "cuda")
# How a numpy callable receives a bfloat16 case: real ml_dtypes bfloat16 arrays, or exact float32
# arrays (the form before ml_dtypes; its float32 outputs of an op are rounded to bfloat16).
NUMPY_BFLOAT16_FORMS = ("ml_dtypes", "float32")
ROLES = ("op", "reference")


def check_choice(value: str, allowed: tuple[str, ...], what: str) -> str:
    """value when it is one of allowed, else ValueError listing them (with a did-you-mean)."""
    if value in allowed:
        return value
    close = difflib.get_close_matches(str(value), allowed, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    raise ValueError(f"{what} must be one of {', '.join(allowed)}, not {value!r}{hint}")


@dataclass(frozen=True)
class AdapterSettings:
    """How one callable (an op or a reference) gets and returns tensors.

    The defaults are what an engine that says nothing means: numpy arrays, bfloat16 as float32
    (engines before adapters). gpuemu's own engine always says which (docs/worker-protocol.md).
    """

    framework: str = "numpy"
    device: str = "auto"
    numpy_bfloat16: str = "float32"
    role: str = "op"

    def __post_init__(self) -> None:
        check_choice(self.framework, FRAMEWORKS, "framework")
        check_choice(self.device, DEVICES, "device")
        check_choice(self.numpy_bfloat16, NUMPY_BFLOAT16_FORMS, "numpy_bfloat16")
        check_choice(self.role, ROLES, "role")
