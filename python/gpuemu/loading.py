# Loading the user's op or reference as a Python function: "module:function" callables and
# persistent scripts that call gpuemu.script.serve. The warm worker and the client's inline mode share it.
"""load_callable, load_script, source_of and install_hint (docs/worker-protocol.md "Starting a worker")."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import re
import sys
from typing import Any, Callable

from gpuemu import script

Fn = Callable[..., Any]

__all__ = ["load_callable", "load_script", "source_of", "install_hint"]

# A framework module the user's code imports -> the gpuemu extra that installs it.
_EXTRAS = {"torch": "torch", "triton": "triton", "jax": "jax", "jaxlib": "jax", "tensorflow": "tensorflow",
           "ml_dtypes": "jax"}


def install_hint(exc: BaseException) -> str:
    """"; install it with: pip install 'gpuemu[torch]'" when the code failed to import a framework."""
    missing = getattr(exc, "name", None) if isinstance(exc, ModuleNotFoundError) else None
    extra = _EXTRAS.get(str(missing).partition(".")[0]) if missing else None
    return f"; install it with: pip install 'gpuemu[{extra}]'" if extra else ""


def load_callable(spec: str) -> Fn:
    """The function named by "module:function" (function may be a dotted attribute path)."""
    module_name, sep, attr_path = spec.partition(":")
    if not sep or not module_name or not attr_path:
        raise ValueError(f"callable {spec!r} must be written module:function, e.g. my_project.refs:softmax")
    obj: Any = importlib.import_module(module_name)
    for part in attr_path.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise AttributeError(f"module {module_name!r} has no attribute {attr_path!r}") from None
    if not callable(obj):
        raise TypeError(f"{spec} is a {type(obj).__name__}, not a function")
    return obj


def source_of(fn: Any) -> tuple[str, int] | None:
    """(absolute file, first line) where fn is defined, or None when Python cannot tell (a builtin,
    a C extension). Decorators are looked through: functools.wraps chains (``__wrapped__``, as jax.jit
    and torch.compile leave them) and Triton's ``JITFunction`` (the Python function is ``.fn``)."""
    seen: set[int] = set()
    target = fn
    while target is not None and id(target) not in seen:
        seen.add(id(target))
        try:
            unwrapped = inspect.unwrap(target)
            file = inspect.getsourcefile(unwrapped)
            _, line = inspect.getsourcelines(unwrapped)
            if file:
                return os.path.abspath(file), max(int(line), 1)
        except (TypeError, OSError, ValueError):
            pass
        target = getattr(target, "fn", None)
    return None


def load_script(path: str) -> tuple[Fn, str | None]:
    """(function, role it registered or None) for a persistent script."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"script {path} does not exist")
    script.clear_registered()
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    name = f"_gpuemu_script_{stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    # Like `python path.py`: the script's own folder comes first on sys.path.
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(module)
    fn = script.registered()
    if fn is not None:
        return fn, script.registered_role()
    fn = getattr(module, "run", None)
    if callable(fn):
        return fn, None
    raise LookupError(
        f"{path} is persistent but does not opt in to warm mode: call gpuemu.script.serve(fn) "
        f"at module level or define run(inputs, **kwargs)"
    )
