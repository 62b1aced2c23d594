# Every exception the gpuemu package raises, in one hierarchy under GpuemuError: one class per thing
# a user does something different about (start the daemon, upgrade one side, fix the request or the kernel).
"""Exceptions of the gpuemu Python package.

    GpuemuError
    ├── ClientError               the client cannot do what was asked
    │   ├── DaemonNotRunningError
    │   ├── ProtocolMismatchError
    │   ├── RequestTimeoutError   (also a TimeoutError)
    │   └── DaemonError           the daemon answered with an error reply
    ├── ValidationError           (also an AssertionError) validate_op's block failed
    ├── MessageError              (also a ValueError) bytes that are no daemon message (docs/protocol.md)
    ├── FrameError                (also a ValueError) bytes that are no worker frame (docs/worker-protocol.md)
    ├── AdapterError              (also a TypeError and ValueError) a tensor a framework adapter cannot convert
    ├── FrameworkNotInstalledError (also an ImportError) the op's framework cannot be imported
    ├── TritonNeedsGpuError       (also a RuntimeError) a Triton launch meant for a GPU, on a machine without one
    ├── CalibrationError          (also a RuntimeError) fitted tolerances failed their own re-check
    └── CaseFailure               the worker judged a call itself; `kind` is the case's failure kind
        ├── InputMutatedError     the op wrote into an input
        ├── OutOfBoundsError      a kernel load or store reached past its tensors' storage (sanitizer)
        ├── InterpreterUnsupportedError  the kernel needs what Triton's CPU interpreter cannot run
        ├── MalformedLaunchError  (also a TypeError) a kernel launch with a grid Triton does not accept (op_error)
        └── KernelNotLaunchedError  the op's call returned without launching a @triton.jit kernel

Standard library only: the worker's frame layer imports it before it knows numpy is installed.
"""

from __future__ import annotations

from gpuemu._failure_kinds import CASE_KINDS

__all__ = [
    "GpuemuError",
    "ClientError",
    "DaemonNotRunningError",
    "ProtocolMismatchError",
    "RequestTimeoutError",
    "DaemonError",
    "ValidationError",
    "TritonNeedsGpuError",
    "CalibrationError",
    "MessageError",
    "FrameError",
    "AdapterError",
    "FrameworkNotInstalledError",
    "CaseFailure",
    "InputMutatedError",
    "OutOfBoundsError",
    "InterpreterUnsupportedError",
    "MalformedLaunchError",
    "KernelNotLaunchedError",
]


class GpuemuError(Exception):
    """Base class of every exception gpuemu raises on purpose."""


class ClientError(GpuemuError):
    """Base class of every error the client raises."""


class DaemonNotRunningError(ClientError):
    """No daemon listens on the socket: start one with `gpuemu daemon start --background`."""


class ProtocolMismatchError(ClientError):
    """The daemon speaks another protocol version: use a client and daemon from the same release."""


class RequestTimeoutError(ClientError, TimeoutError):
    """The daemon did not answer within timeout_ms."""


class DaemonError(ClientError):
    """The daemon answered with an error reply; `kind` is its machine-readable error kind."""

    def __init__(self, message: str, kind: str = "internal", request: str = ""):
        super().__init__(message)
        self.kind = kind
        self.request = request


class ValidationError(GpuemuError, AssertionError):
    """A validation inside `validate_op(...)` failed; `result` is the ValidationResult."""

    def __init__(self, result):
        first = result.failures[0] if result.failures else ""
        super().__init__(f"{result.op_name}: validation failed (seed {result.seed}): {first}")
        self.result = result


class MessageError(GpuemuError, ValueError):
    """Bytes that are not a protocol message (wrong magic or version, truncated, bad JSON)."""


class FrameError(GpuemuError, ValueError):
    """The byte stream is not a valid frame (wrong magic or version, truncated, bad header)."""


class AdapterError(GpuemuError, TypeError, ValueError):
    """A value gpuemu cannot turn into (or read back from) a framework tensor without changing it:
    an unsupported dtype, a tensor on the wrong device, one that requires grad, a JAX tracer, a
    non-tensor. The message names the op, the input or output and the dtype."""


class FrameworkNotInstalledError(GpuemuError, ImportError):
    """The op's framework cannot be imported; the message names the pip extra that installs it."""

    def __init__(self, framework: str, module: str, extra: str, cause: BaseException | None = None):
        why = f" ({type(cause).__name__}: {cause})" if cause is not None else ""
        super().__init__(
            f"the op runs with framework '{framework}', but Python module '{module}' cannot be imported{why}; "
            f"install it with: pip install 'gpuemu[{extra}]'"
        )
        self.framework = framework
        self.module_name = module
        self.extra = extra


class TritonNeedsGpuError(GpuemuError, RuntimeError):
    """A @triton.jit kernel was launched for the GPU (TRITON_INTERPRET=0, the op's triton_interpret
    "never") where torch sees none; the message says to run it under the interpreter instead."""


class CalibrationError(GpuemuError, RuntimeError):
    """calibrate_tolerance's fitted bounds fail the trusted implementation on fresh cases (the re-check
    of `gpuemu calibrate`): they would not hold in CI. `row` is the daemon's calibration row."""

    def __init__(self, message: str, row: dict):
        super().__init__(message)
        self.row = row


class CaseFailure(GpuemuError):
    """A call the worker judged itself: the case fails with `kind` (a failure kind of
    docs/result-json.md) and this message, instead of an op_error (docs/worker-protocol.md, "error")."""

    kind = "op_error"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # A kind the daemon does not know would be refused with every case (src/check/failure_kinds.cpp).
        if cls.kind not in CASE_KINDS:
            raise TypeError(f"{cls.__name__}.kind '{cls.kind}' is no failure kind; one of {', '.join(CASE_KINDS)}")


class InputMutatedError(CaseFailure):
    """The op wrote into one of its inputs (the message names the input and the first changed index)."""

    kind = "input_mutated"


class OutOfBoundsError(CaseFailure, IndexError):
    """A kernel load or store lane lies outside the storage of the tensor it addresses."""

    kind = "out_of_bounds"


class InterpreterUnsupportedError(CaseFailure):
    """The kernel uses a construct Triton's CPU interpreter cannot run: a limit of the interpreter, not a
    bug of the kernel; the message names the construct and the kernel's file:line."""

    kind = "interpreter_unsupported"


class MalformedLaunchError(CaseFailure, TypeError):
    """A kernel launch whose grid Triton does not accept (a CUDA-style ``kernel[grid, block]``, a grid
    that is not 1 to 3 non-negative integers): the op's error, naming the launch line and what Triton
    expects, never an exception out of the interpreter's loop."""

    kind = "op_error"


class KernelNotLaunchedError(CaseFailure):
    """Under the Triton interpreter the op's call returned without launching a @triton.jit kernel (a torch
    fallback when not x.is_cuda, another dispatch path): the case tested other code than the kernel."""

    kind = "kernel_not_launched"
