# The validate_op context manager of docs/python-api.md: run the op inside a with block, hand over its
# output, and the block's exit validates it (through the daemon, or inline without one).
"""validate_op(...) as a context manager: `with validate_op("softmax", inputs={...}) as ctx:`."""

from __future__ import annotations

from typing import Any

from gpuemu.client.client import Client
from gpuemu.errors import ClientError, ValidationError
from gpuemu.results import ValidationResult

__all__ = ["validate_op", "ValidationContext", "ValidationError"]


class ValidationContext:
    """What the with block sees: set the output with ctx.set_output(out) or ctx["output"] = out."""

    def __init__(self, client, op_name: str, inputs: dict, dtype: str | None, seed: int | None,
                 raise_on_failure: bool, kwargs: dict):
        self.client = client
        self.op_name = op_name
        self.inputs = inputs
        self.dtype = dtype
        self.seed = seed
        self.raise_on_failure = raise_on_failure
        self.kwargs = kwargs
        self.output: Any = None
        self.result: ValidationResult | None = None
        self._owns_client = False

    def set_output(self, output: Any) -> None:
        self.output = output

    def __setitem__(self, key: str, value: Any) -> None:
        if key != "output":
            raise KeyError(f"only ctx['output'] can be set, not {key!r}")
        self.output = value

    def __getitem__(self, key: str) -> Any:
        if key == "output":
            return self.output
        if key == "result":
            return self.result
        raise KeyError(key)

    def __enter__(self) -> "ValidationContext":
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        try:
            if exc_type is not None:
                return False  # the op itself failed: let its exception through untouched
            if self.output is None:
                raise ClientError(f"validate_op('{self.op_name}'): the block set no output; call "
                                  "ctx.set_output(out) or ctx['output'] = out inside the with block")
            self.result = self.client.validate_op(self.op_name, self.inputs, self.output, dtype=self.dtype,
                                                  seed=self.seed, **self.kwargs)
            if self.raise_on_failure and not self.result.passed:
                raise ValidationError(self.result)
            return False
        finally:
            if self._owns_client:
                self.client.close()


def validate_op(client_or_op, op_name: str | None = None, inputs: dict | None = None, *, dtype: str | None = None,
                seed: int | None = None, raise_on_failure: bool = True, **kwargs) -> ValidationContext:
    """validate_op(op_name, inputs=...) or validate_op(client, op_name, inputs=...).

    Without a client a Client() is made for the block (the daemon when one runs, else inline).
    On leaving the block the output is validated; a failure raises ValidationError (with .result)
    unless raise_on_failure=False. ctx.result holds the ValidationResult either way.
    """
    if isinstance(client_or_op, str):
        if inputs is None and isinstance(op_name, dict):
            inputs = op_name
        client, name, owns = Client(), client_or_op, True
    else:
        client, name, owns = client_or_op, op_name, False
    if not name:
        raise ClientError("validate_op needs an op name: validate_op('softmax', inputs={...})")
    ctx = ValidationContext(client, name, dict(inputs or {}), dtype, seed, raise_on_failure, kwargs)
    ctx._owns_client = owns
    return ctx
