# What ran a case (framework, version, device, Triton/Pallas interpreter or GPU) and the
# interpreter switches gpuemu puts in a worker's environment (docs/frameworks.md).
"""The "runtime" a worker or script reports with its results, and the interpreter choices.

gpuemu decides per op whether Triton and Pallas kernels run under their CPU interpreter
(``triton_interpret`` / ``pallas_interpret`` in gpuemu.toml) and puts the answer in the
environment of that op's worker before the user's module is imported: ``TRITON_INTERPRET``
(read by ``@triton.jit`` itself) and ``GPUEMU_PALLAS_INTERPRET``, which a Pallas kernel reads
through :func:`pallas_interpret` (re-exported as ``gpuemu.frameworks.jax.interpret``)::

    pl.pallas_call(kernel, out_shape=..., interpret=gpuemu.runtime.pallas_interpret())
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["pallas_interpret", "triton_interpret", "describe"]

_DISTRIBUTIONS = {"pytorch": "torch", "jax": "jax", "tensorflow": "tensorflow", "numpy": "numpy"}
_versions: dict[str, str] = {}


def triton_interpret() -> bool:
    """True when this process runs @triton.jit kernels under the Triton interpreter."""
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def pallas_interpret() -> bool:
    """The ``interpret=`` value for ``pl.pallas_call`` that gpuemu chose for this op: True unless
    the op's pallas_interpret resolved to the GPU. Outside gpuemu (no GPUEMU_PALLAS_INTERPRET),
    True when JAX sees only CPUs."""
    value = os.environ.get("GPUEMU_PALLAS_INTERPRET")
    if value is not None:
        return value == "1"
    try:
        import jax

        return all(d.platform == "cpu" for d in jax.devices())
    except Exception:  # noqa: BLE001  (no JAX: the interpreter is the only way anything runs)
        return True


def _version(framework: str) -> str:
    if framework not in _versions:
        module = sys.modules.get(_DISTRIBUTIONS.get(framework, framework))
        version = getattr(module, "__version__", None) if module is not None else None
        if version is None:
            try:
                from importlib import metadata

                version = metadata.version(_DISTRIBUTIONS.get(framework, framework))
            except Exception:  # noqa: BLE001  (not installed: report no version)
                version = ""
        _versions[framework] = str(version)
    return _versions[framework]


def _device_of(value: Any) -> str | None:
    """The device a returned tensor lives on, or None for numpy arrays and unknown objects."""
    if isinstance(value, dict):
        for item in value.values():
            found = _device_of(item)
            if found is not None:
                return found
        return None
    module = type(value).__module__ or ""
    if module.startswith("torch"):
        return str(getattr(value, "device", "")) or None
    if module.startswith(("jax", "jaxlib")):
        try:
            devices = value.devices()
            return ",".join(sorted(f"{d.platform}:{d.id}" for d in devices)) or None
        except Exception:  # noqa: BLE001  (a tracer or a deleted array: the op_error says why)
            return None
    if module.startswith("tensorflow"):
        return str(getattr(value, "device", "")) or None
    return None


def describe(framework: str, out: Any = None) -> dict:
    """{"framework", "version", "device", "triton"?, "pallas"?} for a case whose function returned
    `out`. "triton" / "pallas" ("interpreter" or "gpu") appear only when the user's code imported
    Triton or Pallas, so a numpy op never claims to have run a Triton kernel."""
    info: dict[str, str] = {"framework": framework, "version": _version(framework)}
    device = _device_of(out)
    info["device"] = device if device is not None else "cpu"
    if "triton" in sys.modules:
        info["triton"] = "interpreter" if triton_interpret() else "gpu"
    if "jax.experimental.pallas" in sys.modules:
        info["pallas"] = "interpreter" if pallas_interpret() else "gpu"
    return info
