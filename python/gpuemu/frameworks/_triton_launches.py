# Counts the @triton.jit launches of each call gpuemu makes of an op under the Triton interpreter, so a
# green case means the kernel ran, and turns a grid Triton would refuse into the kernel's op_error.
"""Kernel launches under the Triton interpreter (docs/frameworks.md, "Launches").

Installed from :mod:`gpuemu.frameworks.triton_hook` once ``triton`` is imported under
``TRITON_INTERPRET=1``. It wraps ``InterpretedFunction.run``, the one place every launch passes
(``kernel[grid](...)``, autotuned and heuristics kernels, the library bridge's JITFunctions):

- each launch while gpuemu calls an op (a CaseRun is set) is counted per kernel name in the run's
  state; :func:`launches` reads them and :func:`judge` fails a call that launched none with
  ``kernel_not_launched`` when gpuemu asks for a launch (``GPUEMU_REQUIRE_LAUNCH=1``);
- the grid is read before the interpreter sees it: anything but 1 to 3 non-negative integers (a
  CUDA-style ``kernel[grid, block]``, a float, a grid function returning ``None``) raises
  :class:`gpuemu.errors.MalformedLaunchError`, an op_error naming the launch line and what Triton
  expects, instead of a TypeError out of the interpreter's (or gpuemu's) own loop.
"""

from __future__ import annotations

import operator
import os
import sys
from typing import Any

from gpuemu.errors import KernelNotLaunchedError, MalformedLaunchError
from gpuemu.frameworks.convert import CaseRun, case_run

__all__ = ["ENV", "install", "installed", "judge", "launches", "uninstall"]

ENV = "GPUEMU_REQUIRE_LAUNCH"  # "1" in an op's worker whose calls must launch a @triton.jit kernel
_KEY = "triton_launches"  # CaseRun.state entry: {kernel name: launches}
# seen: kernel names launched, in order; defined: @triton.jit kernels made since install (the user's: a fork
# server may have imported Triton, and its own library kernels, before)
_state: dict[str, Any] = {"run": None, "init": None, "interp": None, "seen": {}, "defined": 0}

# gpuemu keeps the first 300 characters of a case's message: what Triton expects comes early, and short.
_EXPECTS = ("Triton expects kernel[grid](...) with 1 to 3 non-negative integers, or a grid function "
            "returning them")


def installed() -> bool:
    return _state["run"] is not None


def _kernel_name(function: Any) -> str:
    fn = getattr(function, "fn", None)
    return str(getattr(fn, "__name__", None) or getattr(function, "__name__", "kernel"))


def _launch_line() -> str:
    """file:line of the innermost frame outside Triton and gpuemu: the user's (or library's) launch,
    relative to the working directory (the project's, in a worker) when under it."""
    skipped = [os.path.dirname(os.path.abspath(m.__file__)) + os.sep
               for m in (sys.modules.get("triton"), sys.modules.get("gpuemu")) if m is not None and m.__file__]
    frame = sys._getframe(1)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not any(path.startswith(root) for root in skipped):
            here = os.getcwd() + os.sep
            return f"{path[len(here):] if path.startswith(here) else path}:{frame.f_lineno}"
        frame = frame.f_back
    return "an unknown line"


def _malformed(name: str, grid: Any, problem: str, computed: bool) -> MalformedLaunchError:
    shown = repr(grid)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    if isinstance(grid, tuple) and len(grid) == 2 and all(isinstance(g, (tuple, list)) for g in grid):
        problem = "kernel[grid, block] is CUDA's launch: Triton's block size is a tl.constexpr argument"
    source = " from its grid function" if computed else ""
    return MalformedLaunchError(f"kernel '{name}' launched at {_launch_line()} with grid {shown}{source}: {problem}; "
                                f"{_EXPECTS}")


def _grid_sizes(grid: Any, name: str, computed: bool = False) -> tuple[int, ...]:
    """The grid as a tuple of ints (a list or numpy/torch integers are what a GPU launch accepts too)."""
    if isinstance(grid, (str, bytes)) or not hasattr(grid, "__len__") or not hasattr(grid, "__getitem__"):
        raise _malformed(name, grid, f"a {type(grid).__name__} is not a tuple of sizes", computed)
    if not 1 <= len(grid) <= 3:
        raise _malformed(name, grid, f"it has {len(grid)} entries", computed)
    sizes = []
    for i, size in enumerate(grid):
        try:
            n = operator.index(size)
        except TypeError:
            raise _malformed(name, grid, f"entry {i} is {size!r}, a {type(size).__name__}, not an integer",
                             computed) from None
        if n < 0:
            raise _malformed(name, grid, f"entry {i} is {n}, below 0", computed)
        sizes.append(n)
    return tuple(sizes)


def _checked(grid: Any, name: str) -> Any:
    if callable(grid):
        return lambda meta: _grid_sizes(grid(meta), name, computed=True)
    return _grid_sizes(grid, name)


def _make_run(original: Any) -> Any:
    def run(self, *args, grid, warmup, **kwargs):
        if warmup:
            return original(self, *args, grid=grid, warmup=warmup, **kwargs)
        name = _kernel_name(self)
        grid = _checked(grid, name)
        current = case_run()
        if current is not None:
            counts = current.state.setdefault(_KEY, {})
            counts[name] = counts.get(name, 0) + 1
            _state["seen"].setdefault(name, None)
        return original(self, *args, grid=grid, warmup=warmup, **kwargs)

    return run


def install() -> bool:
    """Wraps the imported interpreter's InterpretedFunction.run (once); False when TRITON_INTERPRET is not 1."""
    if os.environ.get("TRITON_INTERPRET", "0").strip() != "1":
        return False
    if installed():
        return True
    # lazy: the interpreter of the triton the user's code imported (the hook runs once it is)
    import triton.runtime.interpreter as interp

    _state["interp"], _state["run"], _state["init"] = interp, interp.InterpretedFunction.run, \
        interp.InterpretedFunction.__init__
    interp.InterpretedFunction.run = _make_run(interp.InterpretedFunction.run)
    interp.InterpretedFunction.__init__ = _make_init(interp.InterpretedFunction.__init__)
    return True


def _make_init(original: Any) -> Any:
    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        _state["defined"] += 1

    return init


def uninstall() -> None:
    """Restores the interpreter's own run and forgets the kernels seen (tests compare against it)."""
    if installed():
        _state["interp"].InterpretedFunction.run = _state["run"]
        _state["interp"].InterpretedFunction.__init__ = _state["init"]
        _state["run"] = _state["init"] = None
    _state["seen"].clear()
    _state["defined"] = 0


def launches(run: CaseRun | None) -> dict[str, int] | None:
    """{kernel: launches} of a call, or None when launches are not counted (no interpreter layer)."""
    if run is None or not installed():
        return None
    return dict(run.state.get(_KEY, {}))


def _expected_kernels(fn: Any) -> list[str]:
    """What a call should have launched: the kernels earlier calls launched, else the @triton.jit
    kernels the op's module holds."""
    if _state["seen"]:
        return list(_state["seen"])
    module = sys.modules.get(getattr(fn, "__module__", None) or "")
    interp = _state["interp"]
    names = []
    for value in vars(module).values() if module is not None else ():
        target = getattr(value, "fn", None)  # an Autotuner or Heuristics wraps the jit'd function
        for candidate in (value, target, getattr(target, "fn", None)):
            if interp is not None and isinstance(candidate, interp.InterpretedFunction):
                names.append(_kernel_name(candidate))
                break
    return list(dict.fromkeys(names))


def judge(run: CaseRun, fn: Any, role: str) -> None:
    """Fails the op's call with kernel_not_launched when gpuemu requires a launch and it made none."""
    if role != "op" or os.environ.get(ENV, "0").strip() != "1" or "triton" not in sys.modules:
        return
    counted = launches(run)
    if counted is None or counted:
        return
    expected = _expected_kernels(fn)
    # An op whose code has no Triton kernel (a torch op run under the interpreter setting) has nothing to
    # launch: its code defined none since Triton loaded, launched none before, and its module holds none.
    if not (expected or _state["defined"]):
        return
    which = (f"the kernel {expected[0]!r}" if len(expected) == 1 else
             f"one of the kernels {', '.join(map(repr, expected))}" if expected else "a @triton.jit kernel")
    raise KernelNotLaunchedError(
        f"the call returned without launching {which}: its output came from other code (a torch fallback when not "
        "x.is_cuda?), not the kernel; launch it on CPU tensors under the interpreter, or set require_launch = false "
        "on the op")
