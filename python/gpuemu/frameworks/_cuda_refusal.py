# An op's library code that refuses CPU tensors (`assert x.is_cuda`, "Tensors must be CUDA tensors") under
# the Triton interpreter: a limit of running on a CPU, reported as interpreter_unsupported with its line.
"""refusal(exc): the InterpreterUnsupportedError an op's exception stands for, or None.

Only under the Triton interpreter (``TRITON_INTERPRET=1``, where every tensor is a CPU tensor): an
AssertionError, RuntimeError, ValueError or NotImplementedError raised by Python code (not inside a
kernel: the interpreter wraps those in InterpreterError) whose message, or the source line that raised
it, speaks of CUDA (``is_cuda``, ``.cuda``, "CUDA tensors", ``device.type == "cuda"``) or of a CPU
refusal ("CPU only", "not supported on CPU"). The report names the file and line that raised it, so
the user sees which library check refused the CPU run (docs/frameworks.md, "Triton libraries").
"""

from __future__ import annotations

import linecache
import os
import re
import traceback

from gpuemu.errors import CaseFailure, InterpreterUnsupportedError

__all__ = ["refusal"]

_KINDS = (AssertionError, RuntimeError, ValueError, NotImplementedError)
_CUDA_WORDS = re.compile(r"\bis_cuda\b|\bcuda\b|\bCUDA\b|\bCPU only\b|not supported on (the )?CPU"
                         r"|\.device(\.type)?\s*(==|!=)",  # `assert x.device.type == device` (FlagGems' maximum)
                         re.IGNORECASE)


def _raised_at(exc: BaseException) -> tuple[str, int]:
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return "<unknown>", 0
    last = frames[-1]
    return last.filename, last.lineno or 0


def _shown(path: str) -> str:
    relative = os.path.relpath(path) if os.path.isabs(path) else path
    return path if relative.startswith("..") else relative


def refusal(exc: BaseException) -> InterpreterUnsupportedError | None:
    if os.environ.get("TRITON_INTERPRET", "0").strip() != "1":
        return None
    if not isinstance(exc, _KINDS) or isinstance(exc, CaseFailure) or type(exc).__name__ == "InterpreterError":
        return None
    path, line = _raised_at(exc)
    source = linecache.getline(path, line).strip() if line else ""
    if not _CUDA_WORDS.search(f"{exc}\n{source}"):
        return None
    what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return InterpreterUnsupportedError(
        f"the op's library refuses to run on a CPU at {_shown(path)}:{line} ({source or what}; {what}): under "
        "Triton's CPU interpreter every tensor is a CPU tensor, so this check of the library fails before any "
        "kernel runs; a limit of the interpreter run, not a bug of the kernel (a GPU runner with "
        "triton_interpret = \"auto\" checks it)")
