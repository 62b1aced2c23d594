# Loading the user's op or reference as a Python function: "module:function" callables and
# persistent scripts that call gpuemu.script.serve. The warm worker and the client's inline mode share it.
"""load_callable, load_script, warm_entry, source_of and install_hint (docs/worker-protocol.md
"Starting a worker")."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import os
import re
import sys
from typing import Any, Callable

from gpuemu import script

Fn = Callable[..., Any]

__all__ = ["load_callable", "load_script", "warm_entry", "source_of", "install_hint"]

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


def warm_entry(path: str) -> str | None:
    """How the script opts in to being imported, read from its source without running it:
    "serve" (module-level code calls gpuemu.script's serve(...), which reads stdin only when run
    as a program), "run" (it defines a module-level run(inputs, **kwargs)), else None.

    Nothing else is ever imported by inline mode: a stdin/stdout script (the seed FAQ's
    matmul_ref.py, whose top level is ``json.loads(sys.stdin.read())``) would read the importer's
    stdin (a JSONDecodeError, or a hang on a terminal), so it runs as a process."""
    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return None  # run it as a process: its own error then reaches the result as in the CLI
    defines_run = False
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defines_run = defines_run or statement.name == "run"
            continue
        if isinstance(statement, (ast.If, ast.ClassDef)):  # serve under `if __name__ == "__main__"` is cold
            continue
        for node in ast.walk(statement):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                if name == "serve":
                    return "serve"
    return "run" if defines_run else None


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
