# Runs a Triton launch's programs together under the CPU interpreter: the kernel's Python runs once per
# group of programs, each tl value carrying a leading program axis (_triton_batch_ops.py), so numpy serves all.
"""Batched launches (docs/frameworks.md, "Batched launches").

Triton's interpreter calls the kernel once per program. Installed first of gpuemu's Triton layers,
this module replaces that loop (``GridExecutor.__call__``): the programs, in the order the sanitizer
drew from the case seed (0, 1, 2, ... without it), run in groups of up to ``ELEMENTS`` block elements,
one call of the kernel per group. Every value then holds all the group's programs at once.

A group that cannot run together leaves memory as it found it (its writes are undone, newest first)
and runs again in smaller pieces:

- Python control flow on a value that differs between its programs (``if pid == 0``, a loop bound
  from loaded data): the group splits into programs that agree; past ``MAX_SPLITS`` pieces, or when
  splitting does not end, one program at a time, as every later launch of that kernel and constexpr set;
- an operation the batched builder has no version of (device_print, tensor descriptors, ...): one at
  a time, remembered the same way;
- any error (an out-of-bounds access, a failed device_assert, ...): the group runs again one program at
  a time in the seeded order, so the failure and its message (file:line, program id) are exactly the
  ones the one-at-a-time interpreter gives. A group that then passes marks its kernel one-at-a-time.

Each reason is said once per kernel on stderr, naming the kernel's line. ``GPUEMU_TRITON_BATCH=0`` turns
batching off (every launch one program at a time, as the bare interpreter).
"""

from __future__ import annotations

import inspect
import os
import sys
import threading
import time
from typing import Any

import numpy as np

from gpuemu.frameworks import _triton_batch_memory as triton_batch_memory
from gpuemu.frameworks import _triton_batch_ops as ops

__all__ = ["ENV", "ELEMENTS", "MAX_SPLITS", "install", "installed", "enabled"]

ENV = "GPUEMU_TRITON_BATCH"
ELEMENTS = 1 << 21  # block elements of one group (its programs x the largest block one of them makes)
FIRST_GROUP = 64  # programs of a launch's first group, before its block size is known
MAX_SPLITS = 8  # pieces one divergent group may split into before its programs run one at a time
LONG_LAUNCH = 10.0  # seconds a launch runs before stderr says which kernel line it is at

_state: dict[str, Any] = {"installed": False}
_modes: dict[Any, str] = {}  # (kernel, constexprs) -> "one" (one program at a time)
_said: set = set()  # (kernel, reason) already noted on stderr
_interp: Any = None


def installed() -> bool:
    return bool(_state["installed"])


def enabled() -> bool:
    return os.environ.get(ENV, "1").strip() != "0"


def _note(kernel: str, reason: str, text: str) -> None:
    if (kernel, reason) in _said:
        return
    _said.add((kernel, reason))
    print(f"gpuemu: note: Triton kernel '{kernel}': {text}", file=sys.stderr, flush=True)


# ─── arguments with a program axis ───────────────────────────────────────────────────────────────


def _with_program_axis(value: Any) -> Any:
    """A launch argument as a group sees it: a tl.tensor's data gains a program axis of size 1; None
    when the argument is something the batched builder cannot hold (a tensor descriptor)."""
    tl = _interp.tl
    if isinstance(value, tl.tensor):
        handle = value.handle
        if not isinstance(handle, _interp.TensorHandle):
            return None
        return tl.tensor(_interp.TensorHandle(handle.data.reshape((1,) + handle.data.shape), handle.dtype,
                                              dict(handle.attr)), value.type)
    if isinstance(value, tuple):
        items = [_with_program_axis(v) for v in value]
        if any(i is None for i, v in zip(items, value) if v is not None):
            return None
        return _interp._tuple_create(value, items)
    if hasattr(value, "handle"):  # a tensor descriptor or another handle-bearing object
        return None
    return value


def _key(executor: Any, args: dict) -> Any:
    try:
        constexprs = tuple((name, args[name]) for name in executor.constexprs)
        hash(constexprs)
    except TypeError:
        constexprs = tuple((name, repr(args[name])) for name in executor.constexprs)
    return (executor.fn, constexprs)


# ─── the grid ────────────────────────────────────────────────────────────────────────────────────


class _Grid:
    """One launch: its programs in run order (flat ids, x slowest), the kernel and its two argument sets."""

    def __init__(self, executor: Any, args: dict, dims: tuple):
        self.fn = executor.fn
        self.name = getattr(executor.fn, "__name__", "kernel")
        self.args = args
        self.dims = dims
        self.key = _key(executor, args)
        self.order = _program_order(dims)
        self.batched_args: dict | None = None
        # The largest block one program made in this launch's groups so far (None before the first):
        # learned per launch, never from earlier ones, so a replay in a fresh worker forms the same groups.
        self.largest: int | None = None

    def one_at_a_time(self, positions: Any) -> None:
        """Runs the programs at these positions of the run order as the interpreter does, one by one."""
        _, ny, nz = self.dims
        builder = _interp.interpreter_builder
        for position in positions:
            x, rest = divmod(int(position), ny * nz)
            y, z = divmod(rest, nz)
            builder.set_grid_idx(x, y, z)  # the sanitizer maps the position to its seeded program
            self.fn(**self.args)

    def together(self, positions: np.ndarray, depth: int = 0) -> None:
        """Runs the programs at these positions as one group; splits or falls back as the module says."""
        if len(positions) == 1 or _modes.get(self.key) == "one":
            self.one_at_a_time(positions)
            return
        _, ny, nz = self.dims
        programs = self.order[positions]
        x, rest = np.divmod(programs, ny * nz)
        y, z = np.divmod(rest, nz)
        state = ops.state
        state.pids = [_pid_column(a) for a in (x, y, z)]
        state.undo, state.largest, state.size, state.active = [], 1, len(positions), True
        try:
            self.fn(**self.batched_args)
        except ops.Divergence as divergence:
            self._rerun_split(positions, divergence, depth)
        except ops.Unbatchable as refused:
            self._undo()
            _modes[self.key] = "one"
            _note(self.name, "unbatchable", f"{refused.what} at {refused.where} has no batched version: its "
                  "programs run one at a time (the interpreter's speed)")
            self.one_at_a_time(positions)
        except Exception as error:  # noqa: BLE001  (rerun one at a time: the same error, the same message)
            self._undo()
            self.one_at_a_time(positions)
            _modes[self.key] = "one"
            _note(self.name, "error", f"running its programs together raised {type(error).__name__}: {error}; "
                  "one at a time they run: it runs one program at a time from now on")
        else:
            self.largest = max(self.largest or 1, state.largest)
        finally:
            state.active = False
            state.undo = []

    def _undo(self) -> None:
        ops.state.active = False
        ops.undo()

    def _rerun_split(self, positions: np.ndarray, divergence: Any, depth: int) -> None:
        self._undo()
        values = np.asarray(divergence.values).reshape(-1)
        if values.size != len(positions):
            values = np.broadcast_to(values, (len(positions),))
        _, first, inverse = np.unique(values, return_index=True, return_inverse=True)
        pieces = [positions[inverse.reshape(-1) == g] for g in np.argsort(first)]
        if len(pieces) > MAX_SPLITS or depth >= MAX_SPLITS:
            _modes[self.key] = "one"
            _note(self.name, "one", f"{divergence.what} at {divergence.where} differs between its programs "
                  f"({len(pieces)} different values): its programs run one at a time (the interpreter's speed)")
            self.one_at_a_time(positions)
            return
        _note(self.name, "split", f"{divergence.what} at {divergence.where} differs between its programs: "
              "each launch runs them in groups that agree")
        for piece in pieces:
            self.together(piece, depth + 1)

    def run(self) -> None:
        programs = int(np.prod(self.dims))
        if programs == 0:
            return
        if programs == 1 or _modes.get(self.key) == "one":
            self.one_at_a_time(range(programs))
            return
        self.batched_args = {name: _with_program_axis(v) for name, v in self.args.items()}
        if any(b is None and v is not None for b, v in zip(self.batched_args.values(), self.args.values())):
            _modes[self.key] = "one"
            _note(self.name, "arguments", "a tensor descriptor argument has no batched version: its programs "
                  "run one at a time (the interpreter's speed)")
            self.one_at_a_time(range(programs))
            return
        start = 0
        while start < programs:
            count = self._group_size(programs - start)
            self.together(np.arange(start, start + count))
            start += count

    def _group_size(self, remaining: int) -> int:
        largest = self.largest
        if largest is None:
            blocks = [v for _, v in self.key[1] if isinstance(v, int) and not isinstance(v, bool) and v > 0]
            return max(1, min(remaining, FIRST_GROUP, ELEMENTS // max([1] + blocks)))
        return max(1, min(remaining, ELEMENTS // max(1, largest)))


def _pid_column(values: np.ndarray) -> np.ndarray:
    values = values.astype(np.int32)
    if (values == values[0]).all():
        return values[:1].reshape(1, 1)
    return values.reshape(-1, 1)


def _program_order(dims: tuple) -> np.ndarray:
    """Flat program ids in the order the sanitizer drew for this launch (its set_grid_idx mapping)."""
    programs = int(np.prod(dims))
    sanitizer = sys.modules.get("gpuemu.frameworks._triton_sanitizer")
    launch = sanitizer._current() if sanitizer is not None and sanitizer.installed() else None
    order = getattr(launch, "order", None)
    if order is None or len(order) != programs:
        return np.arange(programs, dtype=np.int64)
    return np.asarray(order, dtype=np.int64)


# ─── a launch that does not end ──────────────────────────────────────────────────────────────────


def _user_line(frame: Any) -> str:
    # lazy: the compatibility layer imports triton, loaded by now (a launch is running)
    from gpuemu.frameworks import _triton_compat as triton_compat

    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith(triton_compat._SKIPPED_DIRS) and not name.startswith("<"):
            return triton_compat._where(name, frame.f_lineno)
        frame = frame.f_back
    return "<unknown>"


class _Watchdog:
    """Says once on stderr, LONG_LAUNCH seconds into a launch, which kernel line it is at: a kernel whose
    programs spin-wait on one another, or that never ends, is stopped by the case's timeout (the worker
    is killed), and the case's stderr tail then names the kernel and the line it was stuck on. One
    daemon thread per process polls the launch in progress (a thread per launch cost milliseconds)."""

    def __init__(self) -> None:
        self.launch: tuple | None = None  # (kernel name, grid, thread id, started, said)
        self.thread: threading.Thread | None = None

    def enter(self, name: str, grid: Any) -> None:
        if self.thread is None:
            self.thread = threading.Thread(target=self._watch, name="gpuemu-triton-watchdog", daemon=True)
            self.thread.start()
        self.launch = (name, grid, threading.get_ident(), time.monotonic(), [False])

    def leave(self) -> None:
        self.launch = None

    def _watch(self) -> None:
        while True:
            time.sleep(min(1.0, LONG_LAUNCH / 2))
            launch = self.launch
            if launch is None or launch[4][0] or time.monotonic() - launch[3] < LONG_LAUNCH:
                continue
            launch[4][0] = True
            name, grid, thread = launch[0], launch[1], launch[2]
            where = _user_line(sys._current_frames().get(thread))
            print(f"gpuemu: note: Triton kernel '{name}' (grid {grid}) has run for {LONG_LAUNCH:g} s and is at "
                  f"{where}: programs that wait on one another (a spin on memory another program writes) or a loop "
                  "that never ends run until the case's timeout stops them", file=sys.stderr, flush=True)


_watchdog = _Watchdog()


# ─── GridExecutor.__call__ ───────────────────────────────────────────────────────────────────────


def _make_call(original: Any) -> Any:
    def call(self, *args_dev, **kwargs):
        """Triton 3.9's GridExecutor.__call__ with its program loop replaced by _Grid.run."""
        if not enabled():
            return original(self, *args_dev, **kwargs)
        triton_batch_memory.guard_outer_atomics(_interp.InterpreterBuilder)
        argspec = inspect.getfullargspec(self.fn)
        kwargs = {k: v for k, v in kwargs.items() if k in argspec.args or k in argspec.kwonlyargs}
        args_hst, kwargs_hst = self._init_args_hst(args_dev, kwargs)
        for hook in self.pre_run_hooks:
            hook(*args_hst, **kwargs_hst)
        patch_scope = _interp._patch_lang(self.fn)
        try:
            args = inspect.getcallargs(self.fn, *args_hst, **kwargs_hst)
            args = {name: arg if name in self.constexprs else _interp._implicit_cvt(arg) for name, arg in args.items()}
            grid = self.grid(args) if callable(self.grid) else self.grid
            assert len(grid) <= 3, "grid must have at most 3 dimensions"
            grid = tuple(grid) + (1,) * (3 - len(grid))
            _interp.interpreter_builder.set_grid_dim(*grid)
            try:
                _watchdog.enter(getattr(self.fn, "__name__", "kernel"), grid)
                try:
                    _Grid(self, args, tuple(int(g) for g in grid)).run()
                finally:
                    _watchdog.leave()
            except Exception as e:
                if _interp.triton.knobs.compilation.front_end_debugging:
                    raise
                raise _interp.InterpreterError(repr(e)) from e
        finally:
            patch_scope.restore()
        self._restore_args_dev(args_dev, args_hst, kwargs, kwargs_hst)

    return call


def _make_patch_lang(original: Any) -> Any:
    def patch_lang(fn):
        scope = original(fn)
        ops.lang_overrides(scope)
        return scope

    return patch_lang


def _make_patch_builtin(original: Any) -> Any:
    """The interpreter's _patch_builtin with each package's list of builtins found once: it ran
    inspect.getmembers over tl, tl.core, tl.math and tl.tensor at every launch and every @triton.jit
    helper's call (about 1 ms, a third of a small launch). The list is taken from the originals, before
    any launch patched them; the patching itself is the interpreter's (_patch_attr), recorded in its scope."""
    found: dict[int, tuple[Any, list]] = {}

    def patch_builtin(pkg, builder, scope):
        entry = found.get(id(pkg))
        if entry is None or entry[0] is not pkg:
            members = [(name, member) for name, member in inspect.getmembers(pkg) if _interp.tl.core.is_builtin(member)]
            if not members:  # already patched (a helper's call inside a launch): the interpreter's own way
                return original(pkg, builder, scope)
            entry = found[id(pkg)] = (pkg, members)
        for name, member in entry[1]:
            _interp._patch_attr(pkg, name, member, builder, scope)

    return patch_builtin


def install() -> bool:
    """Patches the imported Triton's interpreter (once). Runs before the compatibility layer and the
    sanitizer, so their checks wrap the batched builder: they see every program's lanes at once."""
    global _interp
    if _state["installed"]:
        return True
    # lazy: the interpreter module of the triton the user's code imported (this runs once it is)
    import triton.runtime.interpreter as interp

    needed = ("GridExecutor", "InterpreterBuilder", "TensorHandle", "ReduceOps", "ScanOps", "ReduceScanOpInterface",
              "_patch_lang", "_patch_builtin", "_patch_attr", "_implicit_cvt", "_tuple_create", "InterpreterError", "interpreter_builder")
    missing = [name for name in needed if not hasattr(interp, name)]
    if missing or not hasattr(interp.GridExecutor, "_init_args_hst"):
        print(f"gpuemu: note: this Triton's interpreter lacks {', '.join(missing) or '_init_args_hst'}: kernels run "
              "one program at a time", file=sys.stderr)
        return False
    _interp = interp
    ops.install(interp)
    interp.GridExecutor.__call__ = _make_call(interp.GridExecutor.__call__)
    interp._patch_lang = _make_patch_lang(interp._patch_lang)
    interp._patch_builtin = _make_patch_builtin(interp._patch_builtin)
    _state["installed"] = True
    return True
