# Bounds checks of the Triton sanitizer (_triton_sanitizer.py): the tensor arguments of a launch, and
# every enabled lane of a load or store checked against the storage its pointer came from.
"""What the sanitizer knows about a launch's tensor arguments and how it judges one access.

A launch (triton_sanitizer._Launch) has ``kernel`` (its name), ``args`` ({id(argument): Arg}),
``run`` (the CaseRun: its ``state`` keeps the notes already printed) and ``interp`` (Triton's
interpreter module, for the program id and the kernel's frames)."""

from __future__ import annotations

import dataclasses
import os
import sys
from typing import Any

import numpy as np

from gpuemu.errors import OutOfBoundsError

__all__ = ["TAG", "Arg", "argument_names", "check", "kernel_site", "register", "site_text"]

TAG = "gpuemu.sanitizer.arg"  # TensorHandle.attr key: the Arg a pointer derives from
_SHOWN = 8  # offending offsets a message lists
_HERE = os.path.dirname(os.path.abspath(__file__))


@dataclasses.dataclass(frozen=True)
class Arg:
    """A tensor argument of one launch: its name and the bytes its storage spans."""

    name: str
    lo: int  # the storage's first byte
    hi: int  # one past its last byte
    start: int  # the view's first element (data_ptr), what offsets count from
    shape: tuple
    storage_offset: int


# ─── where in the kernel ─────────────────────────────────────────────────────────────────────────


def _kernel_line(interp: Any) -> str:
    """file:line of the innermost frame outside Triton and this package: the kernel's statement (the
    interpreter compiles a kernel under its own file name and line numbers)."""
    triton_dir = os.path.dirname(os.path.dirname(os.path.abspath(interp.__file__)))
    frame = sys._getframe(1)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(triton_dir) and not path.startswith(_HERE):
            shown = os.path.relpath(path)  # the worker runs in the project's root: kernels/x.py:17
            return f"{path if shown.startswith('..') else shown}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>:0"


_in_kernel: dict[str, bool] = {}  # co_filename -> outside Triton and this package (a kernel's or the user's)


def kernel_site(interp: Any) -> tuple[str, int]:
    """(co_filename, line) of the frame _kernel_line names, for a caller that runs on every load: each
    file name is judged once, so this is a few frame hops and dict lookups (show it with site_text)."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        outside = _in_kernel.get(name)
        if outside is None:
            triton_dir = os.path.dirname(os.path.dirname(os.path.abspath(interp.__file__)))
            path = os.path.abspath(name)
            outside = _in_kernel[name] = not path.startswith(triton_dir) and not path.startswith(_HERE)
        if outside:
            return name, frame.f_lineno
        frame = frame.f_back
    return "<unknown>", 0


def site_text(site: tuple[str, int]) -> str:
    """kernel_site's answer as _kernel_line shows it: relative to the worker's directory, the project root."""
    if site[1] == 0:
        return "<unknown>:0"
    path = os.path.abspath(site[0])
    shown = os.path.relpath(path)
    return f"{path if shown.startswith('..') else shown}:{site[1]}"


def _program_id(interp: Any) -> str:
    idx = getattr(interp.interpreter_builder, "grid_idx", None) or (0, 0, 0)
    dims = getattr(interp.interpreter_builder, "grid_dim", (1, 1, 1))
    used = max([1] + [i + 1 for i, n in enumerate(dims) if n > 1])
    return str(idx[0]) if used == 1 else "(" + ", ".join(str(i) for i in idx[:used]) + ")"


# ─── bounds ──────────────────────────────────────────────────────────────────────────────────────


def _item_size(ptrs: Any) -> int:
    return max(1, ptrs.get_element_ty().primitive_bitwidth // 8)


def _enabled_lanes(ptrs: Any, mask: Any) -> np.ndarray:
    data = ptrs.data
    if mask is None:
        return data
    enabled = mask.data
    if enabled.all():
        return data
    return data[np.broadcast_to(enabled, data.shape)]


def check(launch: Any, ptrs: Any, mask: Any, what: str) -> None:
    lanes = _enabled_lanes(ptrs, mask)
    if lanes.size == 0:
        return
    size = _item_size(ptrs)
    arg = ptrs.attr.get(TAG)
    if arg is None:
        _check_untracked(launch, lanes, size, what)
        return
    if int(lanes.min()) >= arg.lo and int(lanes.max()) + size <= arg.hi:
        return
    raise OutOfBoundsError(_out_of_bounds(launch, arg, lanes, size, what))


def _out_of_bounds(launch: Any, arg: Arg, lanes: np.ndarray, size: int, what: str) -> str:
    flat = [int(a) for a in np.asarray(lanes).ravel()]
    bad = [a for a in flat if a < arg.lo or a + size > arg.hi]
    offsets = sorted({(a - arg.start) // size for a in bad})
    if len(offsets) <= _SHOWN:
        shown = ", ".join(str(o) for o in offsets)
    elif offsets[-1] - offsets[0] == len(offsets) - 1:  # one run, as a tail block's lanes are
        shown = f"{offsets[0]}..{offsets[-1]}"
    else:
        shown = ", ".join(str(o) for o in offsets[:_SHOWN]) + f", ... ({len(offsets)} offsets)"
    if arg.hi == arg.lo:
        holds = f"'{arg.name}' has no storage (an empty tensor, data_ptr {arg.start:#x}): no lane may touch it"
    else:
        first, last = (arg.lo - arg.start) // size, (arg.hi - arg.start) // size - 1
        view = f" (a view of shape {list(arg.shape)} at storage offset {arg.storage_offset})" \
            if arg.storage_offset or first != 0 else ""
        holds = f"its storage{view} spans offsets {first}..{last}"
    if what == "store":
        effect = "the store was refused before writing anything (on a GPU it would corrupt a neighbour)"
    else:
        effect = "on a GPU this reads memory that is not the tensor's (a fault, or garbage), even where " \
                 "the values are discarded"
    return (f"out-of-bounds {what} in Triton kernel '{launch.kernel}' at {_kernel_line(launch.interp)}: program "
            f"{_program_id(launch.interp)}, argument '{arg.name}', offsets {shown} "
            f"({len(bad)} of {len(flat)} enabled lanes), "
            f"but {holds}; {effect}. Mask the lanes outside (e.g. mask=offs < n) or fix the offsets; "
            "the sanitizer is gpuemu's ([ops] sanitize, docs/frameworks.md)")


def _check_untracked(launch: Any, lanes: np.ndarray, size: int, what: str) -> None:
    lo, hi = int(lanes.min()), int(lanes.max()) + size
    if any(arg.lo <= lo and hi <= arg.hi for arg in launch.args.values()):
        return
    where = _kernel_line(launch.interp)
    notes = launch.run.state.setdefault("sanitizer_notes", set())
    if (launch.kernel, where) in notes:
        return
    notes.add((launch.kernel, where))
    opaque = launch.run.state.get("sanitizer_opaque", {}).get(launch.kernel, {})
    objects = "; arguments it cannot follow: " + ", ".join(f"'{n}' ({t})" for n, t in opaque.items()) if opaque else ""
    print(f"gpuemu sanitizer: note: Triton kernel '{launch.kernel}' at {where}: a {what} through a pointer the "
          "sanitizer cannot follow to a tensor argument (int_to_ptr, a pointer loaded from memory, or an argument "
          f"that is not a torch tensor) reaches outside every tensor argument's storage{objects}; this access runs "
          "unchecked, as the bare interpreter runs it", file=sys.stderr)


# ─── arguments ─────────────────────────────────────────────────────────────────────────────────────


def argument_names(executor: Any, args_hst: list, kwargs_hst: dict) -> list[tuple[str, Any]]:
    named = list(zip(executor.arg_names, args_hst)) + list(kwargs_hst.items())
    out = []
    while named:
        name, value = named.pop(0)
        if isinstance(value, tuple):
            named[:0] = [(f"{name}[{i}]", v) for i, v in enumerate(value)]
        elif hasattr(value, "base") and hasattr(value, "block_shape"):  # a TensorDescriptor
            named.insert(0, (f"{name}.base", value.base))
        out.append((name, value))
    return out


def register(launch: Any, name: str, value: Any) -> None:
    tensor = getattr(value, "base", value)  # a TensorWrapper (e.g. reinterpret) holds the real tensor
    storage_of = getattr(tensor, "untyped_storage", None)
    if not hasattr(value, "data_ptr") or isinstance(value, type):
        return
    try:  # a duck-typed tensor (FlagGems' StridedBuffer) has a torch storage behind its data_ptr() too
        storage = storage_of()
        lo, start = storage.data_ptr(), tensor.data_ptr()
        hi = lo + storage.nbytes()
        shape = tuple(getattr(tensor, "shape", ()))
        item = getattr(getattr(tensor, "dtype", None), "itemsize", 1) or 1
        offset = tensor.storage_offset() if hasattr(tensor, "storage_offset") else (start - lo) // item
    except Exception:  # noqa: BLE001  (no storage it can follow: its accesses run unchecked, with a note)
        opaque = launch.run.state.setdefault("sanitizer_opaque", {})
        opaque.setdefault(launch.kernel, {})[name] = type(value).__name__
        return
    launch.args[id(value)] = Arg(name, lo, hi, start, shape, offset)
