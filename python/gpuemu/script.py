"""Helpers for op and reference scripts that speak gpuemu's JSON+base64 script protocol
(docs/script-protocol.md): read the request from stdin, call a function, write its output.

A script is usually three lines::

    from gpuemu.script import serve
    def softmax(inputs, dim=-1): ...
    serve(softmax, role="reference")

Run as a program (cold mode), ``serve`` reads one request and writes one reply, exactly like
``main``. Imported as a module (by the warm worker of ``python -m gpuemu.worker`` when the op
says ``persistent = true``, or by a test), it only records the function, which the importer
then finds with ``registered()``; the worker calls it once per case.

bfloat16 in cold scripts (docs/script-protocol.md): a bfloat16 tensor is always its 16-bit bit
patterns with ``"dtype": "bfloat16"``, in every mode (CLI, daemon, the client's inline mode). For
a bfloat16 case gpuemu starts the script with ``gpuemu/script_startup`` first on PYTHONPATH, whose
sitecustomize imports ml_dtypes, so numpy knows the name: a plain-protocol script (the seed
documents' templates, ``np.dtype(t["dtype"])`` and ``str(arr.dtype)``) reads and writes bfloat16
like any dtype. This module needs none of it: it decodes bfloat16 itself.
"""

from __future__ import annotations

import inspect
import json
import sys
import time
import traceback
from typing import IO, Any, Callable, Mapping

import numpy as np

from gpuemu._internal import runtime
from gpuemu.errors import CaseFailure
from gpuemu.frameworks import ROLES, AdapterSettings, Converter, triton_hook
from gpuemu.frameworks.convert import output_dtype, seed_of
from gpuemu._internal.wire import tensors
from gpuemu._internal.wire.input_guard import InputGuard

# The script protocol's tensor form, public here for scripts that read or write it themselves
# (docs/python-api.md "Script helpers"); the codec lives in gpuemu._internal.wire.tensors.
decode_tensor = tensors.decode_tensor
encode_tensor = tensors.encode_tensor
decode_storage = tensors.decode_storage
decode_tensor_storage = tensors.decode_tensor_storage

Fn = Callable[..., Any]


# The function a persistent script registered through serve(). One per process: a warm worker
# serves exactly one (op, role), so a single slot is enough and keeps the contract obvious.
_registered: Fn | None = None
_registered_role: str | None = None


def registered() -> Fn | None:
    """The function the most recently imported script passed to serve(), or None."""
    return _registered


def registered_role() -> str | None:
    """The role given with the registered function ("op" or "reference"), or None."""
    return _registered_role


def clear_registered() -> None:
    """Forget the registered function (the worker calls this before importing a script)."""
    global _registered, _registered_role
    _registered = None
    _registered_role = None


def _parse_request(stream: IO[str] | None) -> dict:
    stream = sys.stdin if stream is None else stream
    text = stream.read()
    try:
        request = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"gpuemu.script: stdin is not one JSON request: {exc}") from None
    if not isinstance(request, dict):
        raise ValueError("gpuemu.script: the request must be a JSON object")
    raw_inputs = request.get("inputs", {})
    if not isinstance(raw_inputs, dict):
        raise ValueError("gpuemu.script: request 'inputs' must be an object of tensors")
    kwargs = request.get("kwargs") or {}
    if not isinstance(kwargs, dict):
        raise ValueError("gpuemu.script: request 'kwargs' must be an object")
    if not isinstance(request.get("dtype"), str):
        request["dtype"] = next((str(obj.get("dtype")) for obj in raw_inputs.values()
                                 if isinstance(obj, dict) and str(obj.get("dtype", "")).startswith(("float", "bfloat"))),
                                "float32")
    request["kwargs"] = kwargs
    return request


def _storages(raw_inputs: dict, guard: InputGuard | None = None) -> dict[str, tuple[np.ndarray, str]]:
    """{name: (storage view, dtype)}: bfloat16 as its uint16 bits, strided cases as strided views.
    With a guard, each input is watched for writes by the call."""
    out = {}
    for name, obj in raw_inputs.items():
        storage, dtype, raw = tensors.decode_tensor_buffer(obj)
        if guard is not None:
            guard.watch(str(name), storage, raw)
        out[name] = (storage, dtype)
    return out


def request_settings(request: dict, role: str = "op") -> AdapterSettings:
    """The frameworks.AdapterSettings a cold request asks for: its "framework", "device" and
    "numpy_bfloat16" fields (absent: numpy, auto, float32 — what engines before adapters meant)."""
    defaults = AdapterSettings(role=role)
    return AdapterSettings(framework=str(request.get("framework") or defaults.framework),
                           device=str(request.get("device") or defaults.device),
                           numpy_bfloat16=str(request.get("numpy_bfloat16") or defaults.numpy_bfloat16), role=role)


def read_request(stream: IO[str] | None = None) -> tuple[dict[str, np.ndarray], dict, str]:
    """Reads one request and returns (inputs, kwargs, case_dtype) as numpy arrays in the older form.

    Inputs are numpy arrays with the request's real strides (a strided or transposed case is a
    view into its storage buffer, not a copy); bfloat16 arrives as exact float32. case_dtype is
    the dtype the case is run at; when an older engine leaves it out, it is the first floating
    input's dtype, else "float32". run_once() instead converts the inputs to the request's framework.
    """
    request = _parse_request(stream)
    inputs = {name: tensors.decode_tensor(obj) for name, obj in request.get("inputs", {}).items()}
    return inputs, request["kwargs"], request["dtype"]


def _as_array(value: Any, what: str) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype == object:
        raise TypeError(f"gpuemu.script: {what} is not a numeric array (got {type(value).__name__})")
    return np.asarray(arr, order="C")  # ascontiguousarray would turn a 0-d result into 1-d


def encode_outputs(out: Any, case_dtype: str | None = None, role: str = "op",
                   dtype: str | None = None) -> dict:
    """The reply object for a function's return value: an array or a dict of arrays.

    `dtype` forces the wire dtype of every floating output; otherwise output_dtype() decides.
    """
    def encode(value: Any, what: str) -> dict:
        arr = _as_array(value, what)
        wire = dtype if (dtype is not None and arr.dtype.kind == "f") else output_dtype(arr, case_dtype, role)
        return tensors.encode_tensor(arr, wire)

    if isinstance(out, Mapping):
        if not out:
            raise ValueError("gpuemu.script: the function returned an empty dict of outputs")
        return {"outputs": {str(name): encode(value, f"output {name!r}") for name, value in out.items()}}
    return encode(out, "the output")


def write_output(out: Any, dtype: str | None = None, stream: IO[str] | None = None) -> None:
    """Writes an array (one tensor) or a dict of arrays ({"outputs": ...}) as the reply.

    `dtype` (e.g. "bfloat16") is the wire dtype of floating outputs; None keeps each array's own.
    """
    stream = sys.stdout if stream is None else stream
    reply = encode_outputs(out, role="reference", dtype=dtype)
    stream.write(json.dumps(reply, separators=(",", ":")))
    stream.write("\n")
    stream.flush()


def run_once(fn: Fn, role: str = "op", stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> None:
    """Reads one request, converts its inputs to the request's framework, calls fn(inputs, **kwargs)
    and writes the reply: the body of main, through the same frameworks.Converter as the warm worker.

    A call that fails with a gpuemu.errors.CaseFailure (an op that wrote into its inputs, an
    out-of-bounds access the sanitizer refused, ...) writes {"failure": KIND, "error": message} on
    stdout and re-raises, so the exit status is non-zero and gpuemu records the case under that kind
    (docs/script-protocol.md, "Failures")."""
    # The script imported its code (and maybe triton) already: the Triton layers install now, or when
    # triton is first imported inside the call (docs/frameworks.md); nothing unless TRITON_INTERPRET=1.
    # Not at import of gpuemu.script: `import gpuemu` in a user's own process must not patch Triton.
    triton_hook.arm()
    request = _parse_request(stdin)
    converter = Converter(request_settings(request, role))
    op, case_dtype = str(request.get("op") or ""), request["dtype"]
    stream = sys.stdout if stdout is None else stdout
    guard = InputGuard(op) if role == "op" else None  # a reference's writes reach nobody
    inputs = converter.inputs(_storages(request.get("inputs", {}), guard), op)
    started = time.perf_counter_ns()
    called_ns = time.monotonic_ns()  # CLOCK_MONOTONIC, gpuemu's steady clock
    try:
        out = converter.call(fn, inputs, request["kwargs"], case_dtype, seed_of(request))
        elapsed = time.perf_counter_ns() - started  # the function's time (with the device synchronize)
        if guard is not None:
            guard.check()
    except CaseFailure as exc:
        traceback.print_exc(file=sys.stderr)
        stream.write(json.dumps({"failure": exc.kind, "error": f"{type(exc).__name__}: {exc}",
                                 "elapsed_ns": time.perf_counter_ns() - started, "called_ns": called_ns},
                                separators=(",", ":")))
        stream.write("\n")
        stream.flush()
        raise
    encoded = {name: tensors.encode_tensor(arr, converter.wire_dtype(arr, case_dtype))
               for name, arr in converter.outputs(out, op)}
    reply = encoded["out"] if list(encoded) == ["out"] and not isinstance(out, Mapping) else {"outputs": encoded}
    # What ran and how long the function took: the report's "runtime" and "timing", never the verdict.
    reply["elapsed_ns"] = elapsed
    reply["called_ns"] = called_ns
    reply["runtime"] = {**converter.describe(), **runtime.kernels()}
    if (launches := converter.launches()) is not None:
        reply["launches"] = launches  # the @triton.jit launches of this call, per kernel
    stream.write(json.dumps(reply, separators=(",", ":")))
    stream.write("\n")
    stream.flush()


def main(fn: Fn, role: str = "op") -> None:
    """Cold-mode entry: one request from stdin, fn(inputs, **kwargs), one reply on stdout.

    Exceptions propagate, so the traceback lands on stderr and the exit status is non-zero,
    which gpuemu reports as an op_error or reference_error with that stderr.
    """
    if role not in ROLES:
        raise ValueError(f"gpuemu.script: role must be one of {ROLES}, not {role!r}")
    run_once(fn, role)


def serve(fn: Fn, role: str = "op") -> Fn:
    """Registers fn as this script's callable; when the script runs as a program, also main(fn).

    Whether the script runs as a program is decided by the caller's __name__: the warm worker
    (and any test) imports the script under a module name, so nothing is read from stdin then.
    Call it last in the script (after everything fn needs is defined). Returns fn.
    """
    global _registered, _registered_role
    if role not in ROLES:
        raise ValueError(f"gpuemu.script: role must be one of {ROLES}, not {role!r}")
    _registered = fn
    _registered_role = role
    caller = inspect.currentframe()
    caller = caller.f_back if caller is not None else None
    if caller is not None and caller.f_globals.get("__name__") == "__main__":
        main(fn, role)
    return fn
