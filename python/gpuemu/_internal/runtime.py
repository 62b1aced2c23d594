# The Triton and Pallas interpreter switches gpuemu puts in an op's worker environment, and what
# a worker reports about them (docs/frameworks.md, docs/worker-protocol.md "ready").
"""Interpreter choices per op, made by gpuemu and read here.

gpuemu decides per op whether Triton and Pallas kernels run under their CPU interpreter
(``triton_interpret`` / ``pallas_interpret`` in gpuemu.toml) and puts the answer in the
environment of that op's own worker, before the user's module is imported: ``TRITON_INTERPRET``
(read by ``@triton.jit`` itself) and ``GPUEMU_PALLAS_INTERPRET``, which a Pallas kernel reads
through :func:`pallas_interpret` (also ``gpuemu.frameworks.jax.interpret()``)::

    pl.pallas_call(kernel, out_shape=..., interpret=gpuemu.frameworks.jax.interpret())
"""

from __future__ import annotations

import os
import sys

__all__ = ["pallas_interpret", "triton_interpret", "kernels"]


def triton_interpret() -> bool:
    """True when this process runs @triton.jit kernels under the Triton interpreter."""
    return os.environ.get("TRITON_INTERPRET", "0").strip() == "1"


def pallas_interpret() -> bool:
    """The ``interpret=`` value for ``pl.pallas_call`` that gpuemu chose for this op. Outside
    gpuemu (no GPUEMU_PALLAS_INTERPRET), True exactly when JAX sees only CPUs."""
    value = os.environ.get("GPUEMU_PALLAS_INTERPRET")
    if value is not None and value.strip():
        return value.strip() == "1"
    try:
        # lazy: jax is an optional framework that takes seconds to import; only a Pallas op outside
        # gpuemu (no GPUEMU_PALLAS_INTERPRET) asks.
        import jax

        return all(d.platform == "cpu" for d in jax.devices())
    except Exception:  # noqa: BLE001  (no JAX: the interpreter is the only way a kernel could run)
        return True


def kernels() -> dict[str, str]:
    """{"triton": "interpreter" | "gpu", "pallas": ...} for the kernel languages the user's code
    imported, so a numpy op never claims to have run a Triton kernel."""
    out = {}
    if "triton" in sys.modules:
        out["triton"] = "interpreter" if triton_interpret() else "gpu"
    if "jax.experimental.pallas" in sys.modules:
        out["pallas"] = "interpreter" if pallas_interpret() else "gpu"
    return out
