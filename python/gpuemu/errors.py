# The exceptions the Python client raises: one class per thing a user does something different
# about (start the daemon, upgrade one side, raise the timeout, fix the request, fix the kernel).
"""Exceptions of the gpuemu Python client."""

from __future__ import annotations

__all__ = [
    "ClientError",
    "DaemonNotRunningError",
    "ProtocolMismatchError",
    "RequestTimeoutError",
    "DaemonError",
    "ValidationError",
]


class ClientError(Exception):
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


class ValidationError(AssertionError):
    """A validation inside `validate_op(...)` failed; `result` is the ValidationResult."""

    def __init__(self, result):
        first = result.failures[0] if result.failures else ""
        super().__init__(f"{result.op_name}: validation failed (seed {result.seed}): {first}")
        self.result = result
