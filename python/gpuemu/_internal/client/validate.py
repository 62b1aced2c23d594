# The validate_op context manager of docs/python-api.md: run the op inside a with block, hand over its
# output, and the block's exit validates it (through the daemon, or inline without one).
"""validate_op(...) as a context manager: `with validate_op("softmax", inputs={...}) as ctx:`."""

from __future__ import annotations

from typing import Any

import numpy as np

from gpuemu._internal.client.client import Client
from gpuemu.errors import ClientError, ValidationError
from gpuemu._internal.client.arrays import arrays_of
from gpuemu.results import ValidationResult
from gpuemu._internal.wire.input_guard import first_change, mutation_message

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
        self._before: dict = {}

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
        # The inputs' values as the block got them: an op that writes into them fails as input_mutated
        # (and the case is judged on these, not on what the op left behind).
        self._before = {name: np.array(arr, copy=True) for name, arr in arrays_of(dict(self.inputs), "input").items()}
        return self

    def _mutation(self) -> str:
        """The input_mutated message when the block wrote into an input, else ""."""
        after = arrays_of(dict(self.inputs), "input")
        for name, before in self._before.items():
            now = after.get(name)
            if now is None or now.shape != before.shape or now.dtype != before.dtype:
                continue  # rebound to something else: the array the block was given is what counts
            found = first_change(before, now)
            if found is not None:
                return mutation_message(f"the with block of validate_op({self.op_name!r})", name, *found)
        return ""

    def __exit__(self, exc_type, exc, tb) -> bool:
        try:
            if exc_type is not None:
                return False  # the op itself failed: let its exception through untouched
            if self.output is None:
                raise ClientError(f"validate_op('{self.op_name}'): the block set no output; call "
                                  "ctx.set_output(out) or ctx['output'] = out inside the with block")
            mutated = self._mutation()
            if mutated:
                self.result = self.client._client_failure(self.op_name, self._before, "input_mutated", mutated,
                                                          self.dtype, self.seed, self.kwargs)
            else:
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
