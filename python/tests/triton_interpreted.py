# Loads Triton under its CPU interpreter with gpuemu's compatibility layer, in the test process, for the
# tests that check the layer against the real interpreter and torch (test_triton_compat, _libdevice).
"""``with interpreting(): @triton.jit ...`` defines kernels that run under the interpreter with the layer
installed. TRITON_INTERPRET=1 stays set for the rest of the process, as in a gpuemu worker: Triton reads
it again in modules it imports during a launch. torch.cuda is as before outside the block (the layer's
torch.cuda part is tested through the real gpuemu binary, tests/e2e/test_triton_compat_e2e.py)."""

from __future__ import annotations

import contextlib
import os

import torch

_CUDA_NAMES = ("current_device", "set_device", "device", "get_device_name", "get_device_capability",
               "get_device_properties", "synchronize")


@contextlib.contextmanager
def interpreting():
    saved = {name: getattr(torch.cuda, name) for name in _CUDA_NAMES if hasattr(torch.cuda, name)}
    os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported: its own @jit library reads it then
    try:
        import triton

        if not isinstance(triton.language.standard.cumsum, triton.runtime.interpreter.InterpretedFunction):
            raise RuntimeError("triton was imported in this test process before TRITON_INTERPRET=1 was set, so its "
                               "own library is compiled-mode: import the Triton compat tests first (or alone)")
        from gpuemu.frameworks import _triton_compat as triton_compat

        triton_compat.install()
        yield
    finally:
        for name, value in saved.items():
            setattr(torch.cuda, name, value)
