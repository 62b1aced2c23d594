# The kernel sanitizer gpuemu installs in an op's worker when Triton runs under its CPU interpreter:
# every enabled load/store lane bounds-checked, undefined memory poisoned, programs run in a seeded order.
"""Triton sanitizer (docs/frameworks.md, "The sanitizer"), for Triton 3.x's interpreter.

While gpuemu calls an op (a CaseRun is set, gpuemu.frameworks.convert), each kernel launch:

- records the storage (``untyped_storage()``: first byte, extent) of every tensor argument the
  interpreter hands the kernel, and tags the argument's pointer with it; pointer arithmetic, splat,
  broadcast, reshape, ``tl.where`` and tensor descriptors keep the tag;
- checks every lane a load's or store's mask enables against the storage of the argument its pointer
  came from, before the interpreter touches memory: a lane outside raises OutOfBoundsError (failure
  kind out_of_bounds) naming the argument, the program id, the offsets, load or store and the kernel's
  file:line, so an out-of-bounds store is refused instead of corrupting the worker's heap;
- gives masked-off lanes of a load without ``other=`` poison values (_triton_poison.py says which and why),
  and once the op returns prints one note on the case's stderr naming those loads and the fix (a failing
  case's report shows it; note_dead_lanes);
- runs the grid's programs in an order drawn from the case seed (a replay runs the same order).

A pointer the sanitizer cannot follow to an argument (made by int_to_ptr, loaded from memory, or an
argument that is not a torch tensor) is checked only for lying inside some argument's storage; when it
does not, the case's stderr gets a note and that access runs as the bare interpreter runs it.
Tensors the op allocates with torch.empty / empty_like / empty_strided / new_empty during the call are
poisoned too. Off: ``[ops] sanitize = false`` (gpuemu then does not set GPUEMU_SANITIZE=1).
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import random
import sys
from typing import Any

import numpy as np

from gpuemu.errors import CaseFailure
from gpuemu.frameworks import _triton_batch_ops as triton_batch_ops
from gpuemu.frameworks import _triton_poison as triton_poison
from gpuemu.frameworks._triton_bounds import TAG, Arg, argument_names, check, kernel_site, register, site_text
from gpuemu.frameworks.convert import case_run

__all__ = ["ENV", "install", "uninstall", "installed", "note_dead_lanes"]

ENV = "GPUEMU_SANITIZE"  # "1" in the environment of an op's worker that gpuemu wants sanitized


class _Launch:
    """One kernel launch under the sanitizer (what triton_bounds.check reads)."""

    def __init__(self, kernel: Any, run: Any):
        self.kernel = getattr(kernel, "__name__", "kernel")
        self.run = run
        self.interp = _interp
        self.args: dict[int, Arg] = {}
        self.order: Any = None  # program i of the grid's loop runs as program order[i]


_launches: list[_Launch] = []
_saved: list[tuple[Any, str, Any]] = []  # (owner, attribute, original) for uninstall
_interp: Any = None  # triton.runtime.interpreter once installed


def installed() -> bool:
    return bool(_saved)


def _current() -> _Launch | None:
    return _launches[-1] if _launches else None


def _patch(owner: Any, name: str, make: Any) -> None:
    original = getattr(owner, name)
    _saved.append((owner, name, original))
    setattr(owner, name, make(original))


# ─── the interpreter's hooks ─────────────────────────────────────────────────────────────────────


def _make_init_args(original: Any) -> Any:
    def init_args_hst(self, args_dev, kwargs):
        args_hst, kwargs_hst = original(self, args_dev, kwargs)
        launch = _current()
        if launch is not None:
            for name, value in argument_names(self, args_hst, kwargs_hst):
                register(launch, name, value)
        return args_hst, kwargs_hst

    return init_args_hst


def _make_call(original: Any) -> Any:
    def call(self, *args, **kwargs):
        run = case_run()
        if run is None:
            return original(self, *args, **kwargs)
        _launches.append(_Launch(self.fn, run))
        try:
            return original(self, *args, **kwargs)
        except _interp.InterpreterError as exc:
            cause = exc.__cause__
            while cause is not None and not isinstance(cause, CaseFailure):
                cause = cause.__cause__
            if cause is None:
                raise
            raise cause from None  # the case's own failure kind, not an interpreter error
        finally:
            _launches.pop()

    return call


def _make_implicit_cvt(original: Any) -> Any:
    def implicit_cvt(arg):
        out = original(arg)
        launch = _current()
        if launch is not None:
            found = launch.args.get(id(arg))
            handle = getattr(out, "handle", None)
            if found is not None and handle is not None and hasattr(handle, "attr"):
                handle.attr[TAG] = found
        return out

    return implicit_cvt


def _keeps_tag(position: int) -> Any:
    """A builder method whose result is its position-th argument moved or reshaped: the tag follows."""

    def make(original: Any) -> Any:
        def method(self, *args):
            out = original(self, *args)
            tag = args[position].attr.get(TAG)
            if tag is not None:
                for handle in out if isinstance(out, tuple) else (out,):
                    handle.attr[TAG] = tag
            return out

        return method

    return make


def _keeps_common_tag(first: int, second: int) -> Any:
    """tl.where / cat / join of two pointers: tagged when both come from the same argument."""

    def make(original: Any) -> Any:
        def method(self, *args):
            out = original(self, *args)
            tag = args[first].attr.get(TAG)
            if tag is not None and args[second].attr.get(TAG) is tag:
                out.attr[TAG] = tag
            return out

        return method

    return make


def _keeps_tag_when_pointer(original: Any) -> Any:
    def bitcast(self, src, dst_type):
        out = original(self, src, dst_type)
        tag = src.attr.get(TAG)
        if tag is not None and dst_type.scalar.is_ptr():
            out.attr[TAG] = tag
        return out

    return bitcast


def _make_materialize(original: Any) -> Any:
    def materialize_pointers(self, offsets):
        ptrs, mask = original(self, offsets)
        tag = self.base.attr.get(TAG)
        if tag is not None:
            ptrs.attr[TAG] = tag
        return ptrs, mask

    return materialize_pointers


def _make_masked_load(original: Any) -> Any:
    def create_masked_load(self, ptrs, mask, other, cache_policy, is_volatile):
        launch = _current()
        if launch is not None:
            check(launch, ptrs, mask, "load")
            if other is None and mask is not None and not mask.data.all():
                other = _poisoned_other(launch, ptrs)
                if other is not None:  # for the case's note (note_dead_lanes)
                    launch.run.state.setdefault("sanitizer_dead_lanes", {}).setdefault(
                        kernel_site(launch.interp), launch.kernel)
        return original(self, ptrs, mask, other, cache_policy, is_volatile)

    return create_masked_load


def _poisoned_other(launch: _Launch, ptrs: Any) -> Any:
    element = ptrs.get_element_ty()
    np_dtype = _interp._get_np_dtype(element)
    cache = launch.run.state.setdefault("sanitizer_poison", {})
    key = element.name
    if key not in cache:
        cache[key] = triton_poison.lane_poison(element.name, np_dtype, launch.run.seed)
    pattern = cache[key]
    if pattern is None:
        return None
    return _interp.TensorHandle(triton_batch_ops.per_program(pattern, ptrs.data.shape), element)


def note_dead_lanes(run: Any) -> None:
    """Prints the case's dead-lanes note on stderr when its kernels loaded poisoned lanes (called once the
    op returned, so the note is its stderr's last line: what a failure's report shows)."""
    sites = run.state.get("sanitizer_dead_lanes")
    if sites:
        print(triton_poison.dead_lanes_note([f"{site_text(site)} ({kernel})" for site, kernel in sites.items()]),
              file=sys.stderr, flush=True)


def _make_masked_store(original: Any) -> Any:
    def create_masked_store(self, ptrs, value, mask, cache_policy):
        launch = _current()
        if launch is not None:
            check(launch, ptrs, mask, "store")
        return original(self, ptrs, value, mask, cache_policy)

    return create_masked_store


def _make_atomic_rmw(original: Any) -> Any:
    def create_atomic_rmw(self, rmw_op, ptr, val, mask, sem, scope):
        launch = _current()
        if launch is not None:
            check(launch, ptr, mask, "atomic")
        return original(self, rmw_op, ptr, val, mask, sem, scope)

    return create_atomic_rmw


def _make_atomic_cas(original: Any) -> Any:
    def create_atomic_cas(self, ptr, cmp, val, sem, scope):
        launch = _current()
        if launch is not None:
            check(launch, ptr, None, "atomic")
        return original(self, ptr, cmp, val, sem, scope)

    return create_atomic_cas


def _make_set_grid_dim(original: Any) -> Any:
    def set_grid_dim(self, nx, ny, nz):
        # A grid lambda gets the launch's arguments as the interpreter converted them: its sizes may be
        # scalar tensors (FlagGems' bmm), which the bare loop takes through __index__; so does this.
        nx, ny, nz = (operator.index(n) for n in (nx, ny, nz))
        original(self, nx, ny, nz)
        launch = _current()
        if launch is not None:
            # One order per launch: the case seed and the launch's index within the call pick it.
            index = launch.run.state.get("sanitizer_launches", 0)
            launch.run.state["sanitizer_launches"] = index + 1
            seed = (launch.run.seed or 0) & 0xFFFF_FFFF_FFFF_FFFF
            programs = nx * ny * nz
            if programs <= 4096:  # a str seed is hashed (sha512) the same in every process
                order = list(range(programs))
                random.Random(f"{seed}:{index}").shuffle(order)
                launch.order = order
            else:
                launch.order = np.random.default_rng([seed, index, 0x6B1D]).permutation(programs)

    return set_grid_dim


def _make_set_grid_idx(original: Any) -> Any:
    def set_grid_idx(self, x, y, z):
        launch = _current()
        if launch is not None and launch.order is not None:
            _, ny, nz = self.grid_dim
            program = int(launch.order[(x * ny + y) * nz + z])
            x, rest = divmod(program, ny * nz)
            y, z = divmod(rest, nz)
        return original(self, x, y, z)

    return set_grid_idx


def _poisoning(original: Any) -> Any:
    @functools.wraps(original)
    def allocate(*args, **kwargs):
        out = original(*args, **kwargs)
        run = case_run() if _saved else None
        if run is not None and getattr(out, "device", None) is not None and out.device.type == "cpu" and out.numel():
            triton_poison.fill_empty(out, run.seed)
        return out

    return allocate


# ─── installing ──────────────────────────────────────────────────────────────────────────────────

_BUILDERTAGS = {
    "create_addptr": _keeps_tag(0),
    "create_splat": _keeps_tag(1),
    "create_broadcast": _keeps_tag(0),
    "create_expand_dims": _keeps_tag(0),
    "create_reshape": _keeps_tag(0),
    "create_trans": _keeps_tag(0),
    "create_split": _keeps_tag(0),
    "create_unsplat": _keeps_tag(0),
    "create_select": _keeps_common_tag(1, 2),
    "create_cat": _keeps_common_tag(0, 1),
    "create_join": _keeps_common_tag(0, 1),
    "create_bitcast": _keeps_tag_when_pointer,
    "create_masked_load": _make_masked_load,
    "create_masked_store": _make_masked_store,
    "create_atomic_rmw": _make_atomic_rmw,
    "create_atomic_cas": _make_atomic_cas,
    "set_grid_dim": _make_set_grid_dim,
    "set_grid_idx": _make_set_grid_idx,
}


def install() -> bool:
    """Patches the imported Triton's interpreter and torch's allocators (idempotent). Returns False,
    with a note on stderr, for an interpreter without the hooks the sanitizer needs (kernels then
    run unsanitized)."""
    global _interp
    if _saved:
        return True
    # lazy: torch and triton are the op's optional frameworks; the worker calls this only once the
    # user's code imported triton (and with it torch)
    import torch
    # lazy: as above, the interpreter module of the triton the user's code imported
    import triton.runtime.interpreter as interp

    builder = getattr(interp, "InterpreterBuilder", None)
    needed = [(interp, "GridExecutor"), (interp, "_implicit_cvt"), (interp, "interpreter_builder"),
              (interp, "TensorHandle"), (interp, "InterpreterError"), (interp, "_get_np_dtype"),
              (interp, "TensorDescHandle")] + [(builder, name) for name in _BUILDERTAGS]
    missing = [name for owner, name in needed if owner is None or not hasattr(owner, name)]
    if missing or not hasattr(interp.GridExecutor, "_init_args_hst"):
        print(f"gpuemu sanitizer: note: Triton {getattr(sys.modules.get('triton'), '__version__', '?')}'s "
              f"interpreter lacks {', '.join(missing) or '_init_args_hst'}; kernels run unsanitized",
              file=sys.stderr)
        return False
    _interp = interp
    _patch(interp.GridExecutor, "__call__", _make_call)
    _patch(interp.GridExecutor, "_init_args_hst", _make_init_args)
    _patch(interp, "_implicit_cvt", _make_implicit_cvt)
    _patch(interp.TensorDescHandle, "materialize_pointers", _make_materialize)
    for name, make in _BUILDERTAGS.items():
        _patch(builder, name, make)
    for owner, name in [(torch, "empty"), (torch, "empty_like"), (torch, "empty_strided"),
                        (torch.Tensor, "new_empty"), (torch.Tensor, "new_empty_strided")]:
        _patch(owner, name, _poisoning)
    return True


def uninstall() -> None:
    """Restores every patched attribute (tests compare against the bare interpreter)."""
    while _saved:
        owner, name, original = _saved.pop()
        setattr(owner, name, original)
