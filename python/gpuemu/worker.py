# The warm worker gpuemu starts once per (op, role): `python -m gpuemu.worker --callable mod:fn`
# or `--script path.py`. It loads the code once and serves many cases over binary frames.
"""Warm worker entry point (docs/worker-protocol.md).

The worker keeps the real stdin/stdout for frames and points file descriptors 0 and 1 at
/dev/null and stderr, so user code that reads stdin sees end-of-file and user code that prints
cannot corrupt the frame stream (its prints land in the case's stderr tail).

Loading:
  --callable mod:fn   imports mod (with every --path first on sys.path) and takes fn; dots in fn
                      walk attributes (``mod:Class.method``).
  --script path.py    imports the file under a private module name (so its
                      ``if __name__ == "__main__"`` block does not run) and takes the function
                      it passed to ``gpuemu.script.serve(fn)``, else its top-level ``run``.

Tensors: --framework numpy|pytorch|jax|tensorflow (default numpy), --device auto|cpu|cuda and
--numpy-bfloat16 ml_dtypes|float32 decide what fn receives and may return; every conversion goes
through gpuemu.frameworks.Converter (the one conversion point, shared with cold scripts and the
client).

Each case: fn(inputs: dict[str, tensor], **kwargs) -> tensor | dict[str, tensor].
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import signal
import sys
import time
import traceback
from typing import Any, Callable

import numpy as np

from gpuemu import frameworks
from gpuemu._internal import runtime
from gpuemu.frameworks.convert import seed_of
from gpuemu._internal.core.dtypes import canonical_dtype, from_bf16_bits
from gpuemu.errors import CaseFailure, FrameError, TritonNeedsGpuError
from gpuemu.frameworks import triton_autotune, triton_hook
from gpuemu._internal.loading import install_hint, load_callable, load_script, source_of
from gpuemu._internal.wire import frames, input_files, output_file, segments, tensors
from gpuemu._internal.wire.input_guard import InputGuard
from gpuemu._internal.wire.input_mappings import InputMappings

Fn = Callable[..., Any]

__all__ = ["main", "serve_frames", "load_callable", "load_script", "decode_inputs", "decode_storages",
           "encode_outputs", "encode_items", "source_of"]


def _error_text(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _check(callables: list[str], scripts: list[str]) -> dict:
    """The `checked` frame of --check: each callable or script loaded once, with its source."""
    entries = []
    for kind, target in [("callable", c) for c in callables] + [("script", s) for s in scripts]:
        try:
            fn = load_callable(target) if kind == "callable" else load_script(target)[0]
        except BaseException as exc:  # noqa: BLE001  (every load failure is a finding, then go on)
            entries.append({"kind": kind, "target": target, "ok": False, "error": _error_text(exc) + install_hint(exc),
                            "traceback": traceback.format_exc()})
            continue
        entry = {"kind": kind, "target": target, "ok": True}
        autotuned = triton_autotune.discover(fn)
        if autotuned:  # gpuemu tests each config as a variant of the op (docs/configuration.md)
            entry["autotune"] = autotuned
        where = source_of(fn)
        if where is not None:
            entry["file"], entry["line"] = where
        entries.append(entry)
    _flush_user_output()
    return {"type": "checked", "protocol": frames.VERSION, "entries": entries}


def decode_inputs(header: dict, payload: bytearray) -> dict:
    """{name: ndarray view} for a call frame's "tensors" in numpy's older form (bfloat16 as exact
    float32): decode_storages, then each view as decode_raw gives it."""
    return {name: from_bf16_bits(np_view) if dtype == "bfloat16" else np_view
            for name, (np_view, dtype) in decode_storages(header, payload).items()}


def decode_storages(header: dict, payload: bytearray, guard: InputGuard | None = None,
                    mappings: InputMappings | None = None) -> dict:
    """{name: (storage view, dtype)} for a call frame's "tensors": writable views into the payload,
    into a private (copy-on-write) mapping of gpuemu's input file for an entry with "file"
    (input_files.map_input_files), or into a private copy of the bytes an entry names in a
    shared-memory segment (segments.read_segment: never a mapping its sender could shrink under us).
    bfloat16 stays uint16 bits. With a guard, every input is watched for writes by the call. With
    mappings (a warm worker's), the input files stay mapped from call to call."""
    view = memoryview(payload)
    entries = header.get("tensors", [])
    # Inputs in gpuemu's own file: mapped, not copied.
    files = mappings.map(entries) if mappings is not None else input_files.map_input_files(entries)
    inputs = {}
    for entry in entries:
        offset, nbytes = int(entry["offset"]), int(entry["nbytes"])
        if entry.get("file") is not None:
            raw = files[str(entry["file"])][offset : offset + nbytes]
        elif entry.get("segment") is not None:
            raw = segments.read_segment(str(entry["segment"]), offset, nbytes)
        elif offset < 0 or nbytes < 0 or offset + nbytes > view.nbytes:
            raise FrameError(f"tensor {entry.get('name')!r} lies outside the frame payload")
        else:
            raw = view[offset : offset + nbytes]
        storage = tensors.decode_storage(entry["dtype"], entry["shape"], entry.get("strides"), raw)
        if guard is not None and entry.get("file") is not None:
            guard.watch_file(str(entry["name"]), storage, raw, str(entry["file"]), offset)
        elif guard is not None:
            guard.watch(str(entry["name"]), storage, raw)
        inputs[entry["name"]] = (storage, canonical_dtype(entry["dtype"]))
    return inputs


def encode_outputs(out: Any, case_dtype: str | None, role: str, converter: Any = None, op: str = "") -> tuple[list, list]:
    """(tensor entries, buffers) for fn's return value, with the wire dtypes cold mode uses.

    converter: the worker's frameworks.Converter (default: numpy with bfloat16 as float32)."""
    if converter is None:
        converter = frameworks.Converter(frameworks.AdapterSettings(role=role))
    return encode_items(converter.outputs(out, op), case_dtype, converter)


def encode_items(items: list, case_dtype: str | None, converter: Any) -> tuple[list, list]:
    """(tensor entries, buffers) for [(name, numpy array)] of a converter."""
    entries, buffers, offset = [], [], 0
    for name, arr in items:
        header, raw = tensors.encode_view(arr, converter.wire_dtype(arr, case_dtype))
        entries.append({**header, "name": name, "offset": offset, "nbytes": raw.nbytes})
        buffers.append(raw)
        offset += raw.nbytes
    return entries, buffers


def _move_to_segment(entries: list, buffers: list, lent: Any) -> list:
    """Puts large outputs in a shared-memory segment lent to gpuemu (segments.LentSegments, None when
    the call did not allow it), so they skip the pipe; returns the buffers that still go in the frame."""
    if lent is None:
        return buffers
    try:
        return segments.move_large(entries, buffers, lent.lend)
    except OSError:
        return buffers  # /dev/shm full or missing: the pipe still works (entries are untouched until placed)


def _flush_user_output() -> None:
    # User prints go to stderr (fd 1 points there); flush so they belong to this case's tail.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


class _Converters:
    """The worker's Converter, and one per other framework a call frame names: a call may carry
    "framework", "device" and "numpy_bfloat16" (each overrides the worker's flag for that call)."""

    KEYS = ("framework", "device", "numpy_bfloat16")

    def __init__(self, base: Any):
        self.base = base
        self.made: dict = {}

    def for_call(self, header: dict) -> Any:
        asked = {key: str(header[key]) for key in self.KEYS if header.get(key)}
        if not asked or all(getattr(self.base.requested, k) == v for k, v in asked.items()):
            return self.base
        key = tuple(sorted(asked.items()))
        if key not in self.made:  # a failure (not installed) is this call's error, and the next call's
            self.made[key] = frameworks.Converter(dataclasses.replace(self.base.requested, **asked))
        return self.made[key]


def serve_frames(fn: Fn, frames_in, frames_out: int, role: str, converter: Any = None,
                 announced: dict | None = None) -> int:
    """Serves call frames until the input ends; returns the process exit status.

    converter: a frameworks.Converter (default: numpy, bfloat16 as float32, this role).
    announced: what the ready frame said ran (framework, device, triton, pallas); a call after which
    that changed (the op imported Triton inside its call) carries the new "runtime"."""
    if converter is None:
        converter = frameworks.Converter(frameworks.AdapterSettings(role=role))
    lent = segments.LentSegments() if segments.available() else None
    out_file = output_file.OutputFile()
    try:
        # Only the op's inputs are checked: the reference gets its own private copy (docs/worker-protocol.md).
        return _serve(fn, frames_in, frames_out, _Converters(converter), lent, out_file, dict(announced or {}),
                      role == "op", InputMappings())
    finally:
        out_file.close()
        if lent is not None:
            lent.close()


def _runtime_changed(converter: Any, announced: dict) -> dict | None:
    """What ran, taken after a call, when it differs from what gpuemu was last told (then recorded)."""
    now = {**converter.describe(), **runtime.kernels()}
    if now == announced:
        return None
    announced.clear()
    announced.update(now)
    return now


def _serve(fn: Fn, frames_in, frames_out: int, converters: _Converters, lent: Any, out_file: Any,
           announced: dict, guard_inputs: bool, mappings: InputMappings) -> int:
    while True:
        # The last call's writes into its inputs are undone here, after its reply, while gpuemu judges it.
        mappings.forget_writes()
        try:
            frame = frames.read_frame(frames_in)
        except FrameError as exc:
            frames.write_frame(frames_out, {"type": "fatal", "kind": "protocol", "error": str(exc), "traceback": ""})
            return 3
        if frame is None:
            return 0
        header, payload = frame
        kind = header.get("type")
        if kind == "shutdown":
            return 0
        if kind != "call":
            frames.write_frame(frames_out, {"type": "error", "error": f"unknown frame type {kind!r}", "traceback": ""})
            continue
        elapsed = convert = called_ns = 0
        converter = converters.base
        try:
            if lent is not None:
                lent.release(header.get("released") or [])
            converter = converters.for_call(header)
            op, dtype = str(header.get("op") or ""), header.get("dtype")
            started = time.perf_counter_ns()
            guard = InputGuard(op) if guard_inputs else None
            inputs = converter.inputs(decode_storages(header, payload, guard, mappings), op)
            called = time.perf_counter_ns()
            called_ns = time.monotonic_ns()  # CLOCK_MONOTONIC, gpuemu's steady clock: where the call lies in its wall
            convert = called - started
            try:
                out = converter.call(fn, inputs, header.get("kwargs") or {}, dtype, seed_of(header))
            finally:
                elapsed = time.perf_counter_ns() - called  # the user's time (with the device synchronize)
            returned = time.perf_counter_ns()
            if guard is not None:
                guard.check()  # raises InputMutatedError, a CaseFailure: the reply names input_mutated
            entries, buffers = encode_items(converter.outputs(out, op), dtype, converter)
            convert += time.perf_counter_ns() - returned
            del inputs, out  # framework tensors over the payload: nothing of ours keeps them past the call
            if out_file.place(header, entries, buffers):  # gpuemu's own file, which it reads in place
                buffers = []
            else:
                buffers = _move_to_segment(entries, buffers, lent if header.get("segments") else None)
        except input_files.InputFileUnavailable as exc:  # gpuemu sends this call again with the bytes
            frames.write_frame(frames_out, {"type": "error", "kind": "input_file", "error": _error_text(exc),
                                             "traceback": "", "elapsed_ns": 0})
            continue
        except Exception as exc:  # the case fails, the worker lives on
            tb = traceback.format_exc()
            _flush_user_output()
            reply = {"type": "error", "error": _error_text(exc), "traceback": tb, "elapsed_ns": elapsed,
                     "called_ns": called_ns}
            if (changed := _runtime_changed(converter, announced)) is not None:
                reply["runtime"] = changed
            if (launches := converter.launches()) is not None:
                reply["launches"] = launches
            if isinstance(exc, CaseFailure):
                # The worker judged the call itself: gpuemu records the case under this kind, not op_error.
                reply["failure"] = exc.kind
            elif isinstance(exc, TritonNeedsGpuError):
                # No case of this op can run on this machine (a GPU launch without a GPU): gpuemu stops
                # the run, as for a framework that is not installed, instead of failing every case.
                reply["kind"] = "environment"
            frames.write_frame(frames_out, reply)
            continue
        _flush_user_output()
        reply = {"type": "result", "tensors": entries, "elapsed_ns": elapsed, "called_ns": called_ns,
                 "convert_ns": convert}
        if (changed := _runtime_changed(converter, announced)) is not None:
            reply["runtime"] = changed  # e.g. Triton imported inside the call: gpuemu labels the op from here on
        if (launches := converter.launches()) is not None:
            reply["launches"] = launches  # the @triton.jit launches of this call, per kernel
        frames.write_frame(frames_out, reply, buffers)


# The line gpuemu reads from a worker's stderr when a case runs out of time (docs/worker-protocol.md,
# "Timeouts"): where the user's code was, so the failure names the kernel line that did not end.
STOPPED_AT = "gpuemu: stopped at "


def _user_frame(frame: Any) -> str:
    """file:line in function of the innermost frame outside gpuemu, the frameworks and the standard
    library: the kernel's own line under the Triton interpreter, the op's line otherwise."""
    skipped = [os.path.dirname(os.path.abspath(__file__)) + os.sep]
    for name in ("triton", *(frameworks.adapter(f).MODULE for f in frameworks.FRAMEWORKS)):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None):
            skipped.append(os.path.dirname(os.path.abspath(module.__file__)) + os.sep)
    stdlib = os.path.dirname(os.path.abspath(os.__file__)) + os.sep  # its site-packages holds user libraries
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        in_stdlib = path.startswith(stdlib) and not ("site-packages" in path or "dist-packages" in path)
        if not frame.f_code.co_filename.startswith("<") and not in_stdlib and not path.startswith(tuple(skipped)):
            shown = os.path.relpath(path) if path.startswith(os.getcwd() + os.sep) else path
            return f"{shown}:{frame.f_lineno} in {frame.f_code.co_name}"
        frame = frame.f_back
    return ""


def _say_where_stopped(signum: int, frame: Any) -> None:
    where = _user_frame(frame)
    if where:
        sys.stderr.write(f"{STOPPED_AT}{where}\n")
        sys.stderr.flush()


def _claim_stdio() -> tuple[Any, int]:
    """Private descriptors for the frame stream; fd 0 becomes /dev/null and fd 1 becomes stderr."""
    frames_in = os.fdopen(os.dup(0), "rb", buffering=0)
    frames_out = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return frames_in, frames_out


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m gpuemu.worker", description="gpuemu warm worker")
    parser.add_argument("--callable", metavar="MODULE:FUNCTION", action="append", default=[])
    parser.add_argument("--script", metavar="PATH", action="append", default=[])
    parser.add_argument("--role", choices=("op", "reference"), default="op")
    parser.add_argument("--path", action="append", default=[], help="prepended to sys.path (repeatable)")
    parser.add_argument("--framework", default="numpy", help=", ".join(frameworks.FRAMEWORKS))
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda")
    parser.add_argument("--numpy-bfloat16", dest="numpy_bfloat16", default="float32", help="ml_dtypes or float32")
    parser.add_argument("--check", action="store_true",
                        help="load every --callable and --script, answer one 'checked' frame, exit")
    args = parser.parse_args(argv)
    if not args.check and len(args.callable) + len(args.script) != 1:
        parser.error("give exactly one of --callable or --script (several only with --check)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    frames_in, frames_out = _claim_stdio()
    for entry in reversed(args.path):
        sys.path.insert(0, entry)
    if args.check:
        triton_hook.arm()
        frames.write_frame(frames_out, _check(args.callable, args.script))
        return 0
    role = args.role
    # gpuemu sends SIGUSR1 when a case runs out of time, just before it kills the worker.
    signal.signal(signal.SIGUSR1, _say_where_stopped)
    # Before anything imports triton: its interpreter gets gpuemu's compatibility layer when it loads
    # (docs/frameworks.md, "What the interpreter gets wrong"); a no-op unless TRITON_INTERPRET=1.
    triton_hook.arm()
    load_started = time.perf_counter_ns()  # importing the framework and the user's code is the user's time
    try:
        # Before the user's module, so a framework that is not installed is one error naming the
        # pip extra (kind environment: the run stops) rather than the module's ImportError per case.
        converter = frameworks.Converter(frameworks.AdapterSettings(
            framework=args.framework, device=args.device, numpy_bfloat16=args.numpy_bfloat16, role=args.role))
    except (ImportError, ValueError, TypeError) as exc:  # not installed, no such GPU, bad flag: no case can run
        frames.write_frame(frames_out, {"type": "fatal", "kind": "environment", "error": _error_text(exc),
                                         "traceback": traceback.format_exc()})
        return 2
    try:
        if args.callable:
            fn = load_callable(args.callable[0])
        else:
            fn, registered_role = load_script(args.script[0])
            if registered_role and registered_role != role:
                role = registered_role
                converter = frameworks.Converter(dataclasses.replace(converter.settings, role=role))
    except BaseException as exc:  # noqa: BLE001  (any failure to load is reported, then we exit)
        _flush_user_output()
        frames.write_frame(frames_out, {"type": "fatal", "kind": "load", "error": _error_text(exc) + install_hint(exc),
                                         "traceback": traceback.format_exc()})
        return 2
    _flush_user_output()
    load_ns = time.perf_counter_ns() - load_started
    ready = {**converter.describe(), **runtime.kernels()}
    frames.write_frame(frames_out, {"type": "ready", "protocol": frames.VERSION, "pid": os.getpid(),
                                     "python": sys.version.split()[0], "load_ns": load_ns,
                                     "mapped_inputs": True, "mapped_outputs": True, **ready})
    return serve_frames(fn, frames_in, frames_out, role, converter, announced=ready)


if __name__ == "__main__":
    sys.exit(main())
