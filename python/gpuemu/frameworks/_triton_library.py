# Makes Triton libraries built around the compiler's objects (FlagGems, ...) run unmodified under the
# interpreter: a jit'd function is a JITFunction, its launch returns a launchable kernel, dtypes are constexprs.
"""The library bridges of the Triton compatibility layer (docs/frameworks.md, "Triton libraries").

Installed by :mod:`gpuemu.frameworks.triton_hook` next to :mod:`_triton_compat`, only under
``TRITON_INTERPRET=1``. Libraries written for the compiler read the objects ``@triton.jit`` returns
there; the bare interpreter returns an ``InterpretedFunction`` that lacks them:

- ``@triton.jit`` returns an :class:`InterpretedJITFunction`: an ``InterpretedFunction`` (it runs on the
  interpreter) that is also a ``triton.runtime.JITFunction``, with the compiler's ``params``,
  ``signature``, ``src``, ``cache_key``, ``__globals__`` and ``__module__`` (libraries walk ``.fn`` to a
  JITFunction, hash its source, and generate code from it: FlagGems' LibEntry and pointwise_dynamic);
- its launch returns what a GPU launch returns, a kernel that ``kernel[grid](*args)`` launches again
  with the non-constexpr arguments alone (a launch cache such as LibEntry's calls it so);
- ``a and b`` of tensors is their logical_and, as the compiler makes it (:mod:`_triton_boolop`);
- a ``tl.dtype`` has ``.value`` (itself): the compiler hands a jit'd helper its dtype argument as a
  ``tl.constexpr``, whose ``.value`` is the dtype, and the interpreter hands it the bare dtype.
"""

from __future__ import annotations

import inspect
import os
from typing import Any

import triton
import triton.language as tl
from triton.runtime import interpreter as interp
from triton.runtime.jit import JITFunction

from gpuemu.frameworks import _triton_boolop as triton_boolop

__all__ = ["InterpretedJITFunction", "InterpretedKernel", "install", "installed"]

_state: dict[str, Any] = {"installed": False}


class InterpretedKernel:
    """What a launch of an InterpretedJITFunction returns, as a GPU launch returns its CompiledKernel:
    ``kernel[grid](*args)`` runs the function again on the interpreter with the non-constexpr arguments
    given positionally (in the signature's order) and the constexprs of the launch that made it."""

    def __init__(self, function: "InterpretedJITFunction", constexprs: dict):
        self.function = function
        self.constexprs = constexprs
        self.name = function.__name__

    def __getitem__(self, grid: Any) -> Any:
        names = [p.name for p in self.function.params if not p.is_constexpr]

        def launch(*args: Any) -> "InterpretedKernel":
            if len(args) > len(names):
                raise TypeError(f"kernel '{self.name}' takes {len(names)} non-constexpr arguments "
                                f"({', '.join(names)}), got {len(args)}")
            return self.function.run(grid=grid, warmup=False, **dict(zip(names, args)), **self.constexprs)

        return launch

    def __repr__(self) -> str:
        return f"InterpretedKernel({self.name}, constexprs={self.constexprs})"


class InterpretedJITFunction(interp.InterpretedFunction, JITFunction):
    """A @triton.jit function under the interpreter that libraries written for the compiler accept as a
    JITFunction. A function without source (made by exec) stays a plain InterpretedFunction (_jit), as the
    compiler refuses it too ("@jit functions should be defined in a Python file")."""

    def __init__(self, fn: Any, **kwargs: Any) -> None:
        interp.InterpretedFunction.__init__(self, fn, **kwargs)
        jit_kwargs = {k: kwargs[k] for k in ("version", "do_not_specialize", "do_not_specialize_on_alignment",
                                             "debug", "noinline", "repr", "launch_metadata") if k in kwargs}
        JITFunction.__init__(self, fn, **jit_kwargs)
        self.arg_names = [p.name for p in self.params]

    # JITCallable.__init__ sets __name__; the interpreter's class reads it from fn.
    __name__ = property(lambda self: self.fn.__name__, lambda self, value: None)  # type: ignore[assignment]
    # Identity, as the interpreter's own objects: a hash must not parse the source (JITCallable hashes cache_key).
    __hash__ = object.__hash__
    __call__ = interp.InterpretedFunction.__call__  # a call inside a kernel: the interpreter's device-function call

    def run(self, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> InterpretedKernel:
        named = {k: v for k, v in kwargs.items() if k in self.signature.parameters}  # not num_warps, ...
        bound = self.signature.bind_partial(*args, **named).arguments
        constexprs = {p.name: bound.get(p.name, p.default) for p in self.params
                      if p.is_constexpr and (p.name in bound or p.default is not inspect.Parameter.empty)}
        if not warmup:
            interp.InterpretedFunction.run(self, *args, grid=grid, warmup=False, **kwargs)
        return InterpretedKernel(self, constexprs)

    def __repr__(self) -> str:
        return f"InterpretedJITFunction({self.module}:{self.fn.__qualname__})"


def _jit(fn: Any = None, *, version: Any = None, repr: Any = None, launch_metadata: Any = None,
         do_not_specialize: Any = None, do_not_specialize_on_alignment: Any = None, debug: Any = None,
         noinline: Any = None) -> Any:
    """triton.jit under the interpreter, with the same arguments: an InterpretedJITFunction."""

    def decorator(function: Any) -> Any:
        kwargs = dict(version=version, do_not_specialize=do_not_specialize,
                      do_not_specialize_on_alignment=do_not_specialize_on_alignment, debug=debug, noinline=noinline,
                      repr=repr, launch_metadata=launch_metadata)
        try:
            return InterpretedJITFunction(function, **kwargs)
        except ValueError:  # no source ("@jit functions should be defined in a Python file"): as before
            return interp.InterpretedFunction(function, **kwargs)

    return decorator(fn) if fn is not None else decorator


def _patch_dependencies_finder() -> None:
    """A cache_key walks the functions a kernel calls; those jit'd before the layer was installed (Triton's
    own tl.standard helpers) are plain InterpretedFunctions, which it would refuse: they count by name."""
    finder = triton.runtime.jit.DependenciesFinder
    record = finder.record_reference
    if getattr(record, "__gpuemu__", False):
        return

    def record_reference(self, val, var_dict=None, name=None):
        if type(val) is interp.InterpretedFunction:
            self.hasher.update(f"{val.fn.__module__}.{val.fn.__qualname__}".encode("utf-8"))
            return None
        return record(self, val, var_dict, name)

    record_reference.__gpuemu__ = True
    finder.record_reference = record_reference


def installed() -> bool:
    return bool(_state["installed"])


def install() -> bool:
    """Installs the bridges (once); False and no change when TRITON_INTERPRET is not 1."""
    if os.environ.get("TRITON_INTERPRET", "0").strip() != "1":
        return False
    if _state["installed"]:
        return True
    # triton.jit as libraries reach it (`triton.jit`, `from triton import jit` after this point); the
    # interpreter's own InterpretedFunction stays, so isinstance checks against it still hold.
    _state["jit"] = triton.jit
    triton.jit = triton.runtime.jit.jit = _jit
    _patch_dependencies_finder()
    triton_boolop.install()
    if not hasattr(tl.dtype, "value"):
        tl.dtype.value = property(lambda self: self)
    _state["installed"] = True
    return True


def uninstall() -> None:
    """Restores the bare interpreter (tests compare against it); functions jit'd meanwhile stay bridged."""
    if not _state["installed"]:
        return
    triton.jit = triton.runtime.jit.jit = _state["jit"]
    triton_boolop.uninstall()
    if isinstance(vars(tl.dtype).get("value"), property):
        del tl.dtype.value
    _state["installed"] = False

