# Gating a drop-in torch op library (FlagGems, ...) with one short gpuemu.toml entry per op: the op is a
# call expression on the case's inputs, its reference the torch op of the same name run in float64.
"""One entry per op of a library whose ops replace torch's (docs/frameworks.md, "A torch op library: one
entry per op").

Every op of such a project uses the same two callables, and says what to call in its ``kwargs``::

    [[ops]]
    name = "gems"                                  # the shared settings, extended by each op
    module = "gpuemu.torch_library:op"
    reference = "gpuemu.torch_library:reference"
    reference_framework = "pytorch"
    ...

    [[ops]]
    name = "softmax"
    extends = "gems"
    kwargs = { call = "flag_gems.ops.softmax(x, -1)" }

``call`` is a Python expression over the case's inputs (by name), ``torch`` and the modules its dotted
names start with (imported on first use). Its outermost call is the op under test. The reference
evaluates the same expression, with the inputs in float64 (gpuemu widens a framework reference's
inputs), and that call replaced by the torch op of the same name: the first of ``torch.NAME``,
``torch.nn.functional.NAME``, ``torch.special.NAME``, ``torch.linalg.NAME`` and ``torch.ops.aten.NAME``
that exists. ``reference = "..."`` in the kwargs gives the reference expression instead, for an op
whose name torch does not have. A tuple result (values and indices) becomes the outputs ``out0``,
``out1``, ...
"""

from __future__ import annotations

import ast
import functools
import importlib
from typing import Any

__all__ = ["op", "reference", "torch_function"]

_TORCH_NAMESPACES = ("torch", "torch.nn.functional", "torch.special", "torch.linalg", "torch.ops.aten")
_REFERENCE_CALLEE = "__gpuemu_reference__"


def op(inputs: dict, call: str, reference: str | None = None, **_: Any) -> Any:
    """The op under test: `call` evaluated over the case's inputs."""
    return _outputs(_evaluate(_parsed(call), call, inputs))


def reference(inputs: dict, call: str, reference: str | None = None, **_: Any) -> Any:
    """The reference: `reference` evaluated when given, else `call` with its outermost call replaced by
    the torch op of the same name (inputs arrive in float64)."""
    if reference is not None:
        return _outputs(_evaluate(_parsed(reference), reference, inputs))
    tree, name = _reference_tree(call)
    return _outputs(_evaluate(tree, call, inputs, {_REFERENCE_CALLEE: torch_function(name, call)}))


def torch_function(name: str, call: str = "") -> Any:
    """The torch op named `name`, looked up in torch's namespaces in order."""
    for namespace in _TORCH_NAMESPACES:
        module: Any = importlib.import_module("torch")
        for part in namespace.split(".")[1:]:
            module = getattr(module, part)
        found = getattr(module, name, None)
        if callable(found):
            return found
    raise ValueError(f"gpuemu.torch_library: no torch op named {name!r} (for call {call!r}) in "
                     f"{', '.join(_TORCH_NAMESPACES)}; give the reference as kwargs reference = \"torch....(...)\"")


@functools.lru_cache(maxsize=None)
def _parsed(expression: str) -> ast.Expression:
    try:
        return ast.parse(expression, mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"gpuemu.torch_library: {expression!r} is not a Python expression ({exc.msg})") from None


def _outer_call(tree: ast.Expression, expression: str) -> ast.Call:
    """The call the expression's value comes from: through subscripts and attributes (`max(x, 1)[0]`)."""
    node = tree.body
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    if not isinstance(node, ast.Call):
        raise ValueError(f"gpuemu.torch_library: call {expression!r} calls nothing; write the op's call, e.g. "
                         "\"flag_gems.ops.abs(x)\"")
    return node


@functools.lru_cache(maxsize=None)
def _reference_tree(call: str) -> tuple[ast.Expression, str]:
    _parsed(call)  # a syntax error says so
    copy = ast.parse(call, mode="eval")  # its own tree: the cached one stays the op's
    outer = _outer_call(copy, call)
    callee = outer.func
    name = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", None)
    if name is None:
        raise ValueError(f"gpuemu.torch_library: call {call!r}: its op is no name torch could have")
    outer.func = ast.copy_location(ast.Name(id=_REFERENCE_CALLEE, ctx=ast.Load()), callee)
    return ast.fix_missing_locations(copy), name


def _roots(tree: ast.AST) -> set[str]:
    """The first names of dotted names in the expression (`flag_gems` of `flag_gems.ops.abs`)."""
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def _evaluate(tree: ast.Expression, expression: str, inputs: dict, extra: dict | None = None) -> Any:
    namespace: dict[str, Any] = {"torch": importlib.import_module("torch")}
    for name in _roots(tree) - set(inputs) - set(extra or {}) - {"torch"}:
        try:
            namespace[name] = importlib.import_module(name)
        except ImportError:
            pass  # a builtin (len, float) or a name the expression fails on, saying which
    _import_dotted(tree, namespace)
    namespace.update(extra or {})
    namespace.update(inputs)
    return eval(compile(tree, f"<gpuemu.torch_library {expression}>", "eval"), namespace)  # noqa: S307


def _import_dotted(tree: ast.AST, namespace: dict) -> None:
    """Imports the submodules a dotted name reaches (`flag_gems.ops` of `flag_gems.ops.abs`)."""
    for node in ast.walk(tree):
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in namespace or not parts:
            continue
        dotted = node.id
        for part in reversed(parts[1:]):  # the last part is an attribute (the function), not a module
            dotted += "." + part
            try:
                importlib.import_module(dotted)
            except ImportError:
                break


def _outputs(value: Any) -> Any:
    if isinstance(value, tuple):
        return {f"out{i}": item for i, item in enumerate(value)}
    return value
