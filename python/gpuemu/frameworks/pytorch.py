# The PyTorch adapter: gpuemu storage views become torch tensors over the same memory (bfloat16 by
# viewing its bits, strided cases with their strides) and come back as numpy views of the tensors.
"""gpuemu.frameworks.pytorch: torch tensors in and out, no copy on the CPU, no cast anywhere.

torch is imported on first use (load()), not when this module is imported: importing torch takes
seconds, and gpuemu must import (and say which extra to install) on machines without it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from typing import Any, Iterator

import numpy as np

from gpuemu._internal.core.dtypes import DTYPE_NAMES, ml_bfloat16
from gpuemu.errors import AdapterError, TritonNeedsGpuError
from gpuemu.frameworks._requirement import require

__all__ = ["NAME", "MODULE", "EXTRA", "DTYPES", "load", "version", "select_device", "prepare", "to_framework",
           "is_tensor", "to_numpy", "calling", "row_major"]

NAME = "pytorch"
MODULE = "torch"
EXTRA = "torch"
# gpuemu dtype -> torch dtype attribute: the names agree for every gpuemu dtype.
DTYPES = {name: name for name in DTYPE_NAMES}


def load():
    return require(MODULE, NAME, EXTRA)


def version() -> str:
    return str(load().__version__)


def select_device(device: str) -> str:
    """cpu, cuda, or for auto: cuda when torch sees a GPU, else cpu."""
    torch = load()
    if device == "cuda" and not torch.cuda.is_available():
        raise AdapterError("device 'cuda' was asked for, but torch sees no GPU (torch.cuda.is_available() is "
                           "False); use device 'auto' to fall back to the CPU")
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def prepare(settings) -> None:
    load()


def _names(torch) -> dict:
    return {getattr(torch, name): name for name in DTYPES}


def _to_device(t, device: str):
    """t on `device` with the same strides: the memory the view spans is copied, then viewed again,
    so a strided case with gaps stays strided on the GPU (Tensor.to would make it contiguous)."""
    if t.numel() == 0 or t.dim() == 0:
        return t.to(device)
    extent = 1 + sum((size - 1) * step for size, step in zip(t.shape, t.stride()))
    span = t.as_strided((extent,), (1,), t.storage_offset()).to(device)
    return span.as_strided(tuple(t.shape), tuple(t.stride()), 0)


def to_framework(storage: np.ndarray, dtype: str, settings) -> Any:
    """A torch tensor over the storage view's memory (on the CPU), with its shape and strides.

    bfloat16 bits are viewed as torch.bfloat16 (through int16, which torch.from_numpy knows).
    """
    torch = load()
    arr = storage.view(np.int16) if dtype == "bfloat16" else storage
    with warnings.catch_warnings():
        # Inputs mapped from a shared-memory segment are read-only arrays; torch warns about
        # those once, on stderr, where it would land in every case's output. An op that writes
        # into its input is caught by gpuemu as input_mutated (or crashes on the read-only page).
        warnings.simplefilter("ignore", UserWarning)
        t = torch.from_numpy(arr)
    if dtype == "bfloat16":
        t = t.view(torch.bfloat16)
    return t if settings.device == "cpu" else _to_device(t, settings.device)


def is_tensor(value: Any) -> bool:
    torch = load()
    return isinstance(value, torch.Tensor)


def to_numpy(value: Any, settings, what: str) -> np.ndarray:
    """A numpy view of a torch tensor's values (a copy only from the GPU), bfloat16 as ml_dtypes.

    settings None accepts a tensor on any device with memory (cpu, cuda); otherwise the tensor
    must be on the callable's device.
    """
    torch = load()
    if not isinstance(value, torch.Tensor):
        raise AdapterError(f"{what} is a {type(value).__name__}, not a torch.Tensor; return a tensor")
    if value.requires_grad:
        raise AdapterError(f"{what} requires grad; gpuemu calls the op under torch.no_grad(), so the op turned "
                           "grad on itself: return out.detach()")
    if value.layout != torch.strided:
        raise AdapterError(f"{what} has layout {value.layout}; return a dense tensor (e.g. out.to_dense())")
    name = _names(torch).get(value.dtype)
    if name is None:
        raise AdapterError(f"{what} has dtype {value.dtype}, which gpuemu cannot store without a cast; return "
                           f"one of torch.{', torch.'.join(DTYPES)}")
    place = value.device.type
    want = None if settings is None else settings.device
    if want is not None and place != want:
        raise AdapterError(f"{what} is on device '{value.device}', but the op runs on '{want}'; return the "
                           f"output on '{want}' (the device of its inputs)")
    if place not in ("cpu", "cuda"):
        raise AdapterError(f"{what} is on device '{value.device}', which holds no data gpuemu can read; "
                           "return a tensor on cpu or cuda")
    t = value.detach() if place == "cpu" else value.detach().cpu()
    if name == "bfloat16":
        return t.view(torch.int16).numpy().view(ml_bfloat16())
    return t.numpy()


def row_major(value: Any) -> Any:
    """An op's output tensor made row-major by torch before it is read (the frame needs row-major
    bytes): torch's blocked copy of a transposed 64 MiB tensor is several times faster than
    numpy's element-strided one (docs/performance.md, (g)). Anything else is returned as it is."""
    torch = load()
    if isinstance(value, torch.Tensor) and value.layout == torch.strided and value.device.type == "cpu" \
            and not value.requires_grad and not value.is_contiguous():
        return value.contiguous()
    return value


def _raised_in_triton(exc: BaseException) -> bool:
    tb = exc.__traceback__
    while tb is not None:
        if f"{os.sep}triton{os.sep}" in tb.tb_frame.f_code.co_filename:
            return True
        tb = tb.tb_next
    return False


def _triton_without_gpu(torch, exc: BaseException) -> str | None:
    """What to do when a Triton launch failed because it was meant for a GPU (TRITON_INTERPRET is
    not "1": the op's triton_interpret is "never", or "auto" on a machine with a GPU device node)
    and torch sees none; None for any other failure."""
    if "triton" not in sys.modules or os.environ.get("TRITON_INTERPRET", "0").strip() == "1":
        return None
    if torch.cuda.is_available() or not _raised_in_triton(exc):
        return None
    return ("a Triton kernel was launched for the GPU (TRITON_INTERPRET=0: the op's triton_interpret is "
            "\"never\"), but torch sees no GPU on this machine; set triton_interpret = \"always\" (or \"auto\") "
            "to run it under the Triton interpreter, or run on a GPU runner. Triton said: "
            f"{type(exc).__name__}: {exc}")


@contextlib.contextmanager
def calling(settings) -> Iterator[None]:
    """torch.no_grad() around the call, then a device synchronize, so the outputs read afterwards
    are complete (GPU kernels launch asynchronously). A Triton launch for a GPU that is not there
    (triton_interpret = "never" on a CPU) says so, and what to set, instead of Triton's driver error."""
    torch = load()
    try:
        with torch.no_grad():
            yield
    except Exception as exc:
        why = _triton_without_gpu(torch, exc)
        if why is None:
            raise
        raise TritonNeedsGpuError(why) from exc
    if settings.device == "cuda":
        torch.cuda.synchronize()
