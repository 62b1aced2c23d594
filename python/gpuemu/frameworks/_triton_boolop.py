# `a and b` / `a or b` / `not a` on Triton tensors under the interpreter, as the compiler computes them: the bare
# interpreter runs Python's, which keeps only `b` of a block `a and b` (a lost mask) and makes `not block` False.
"""The compiler's boolean values in the interpreter (docs/frameworks.md, "What the interpreter gets wrong").

Triton's compiler turns ``mask = rows < M and cols < N`` into ``logical_and`` of the two tensors (with a
deprecation warning for blocks), short-circuiting only on compile-time values. The interpreter runs the
kernel as Python: ``bool()`` of a block is always True, so the expression is ``cols < N`` and the row
mask is gone (FlagGems' log_softmax then reads and writes past its rows, which corrupts the worker's heap
without the sanitizer). :func:`install` adds the compiler's rule to the interpreter's AST rewrite.

A comparison's result is int1 on both sides, but the interpreter's handle keeps the type of its left
operand (int32 for ``pid < B``), so splatting that scalar to a block makes int32 values: ``(offs < W) &
(pid < B)`` is then an int32 mask, which ``tl.load`` refuses ("mask has unsupported dtype"; FlagGems'
reflection_pad1d). :func:`install` also types every comparison's handle int1.
"""

from __future__ import annotations

import ast
from typing import Any, Callable

import triton.language as tl
from triton.runtime import interpreter as interp

__all__ = ["bool_op", "not_op", "install", "uninstall"]

HELPER = "_gpuemu_bool_op"  # the names the rewritten kernels call (put in their globals by the interpreter)
NOT_HELPER = "_gpuemu_not"
_state: dict[str, Any] = {"original": None, "comparisons": {}}
# The interpreter's comparison builders (each returns numpy bools under its left operand's type).
COMPARISONS = tuple(f"create_icmp{c}" for c in ("EQ", "NE", "SLT", "SGT", "SLE", "SGE", "ULT", "UGT", "ULE", "UGE")) + \
    tuple(f"create_fcmp{c}" for c in ("OLT", "OGT", "OLE", "OGE", "OEQ", "ONE", "ULT", "UGT", "ULE", "UGE", "UEQ",
                                      "UNE"))


def bool_op(is_and: bool, *operands: Callable[[], Any]) -> Any:
    """The compiler's `and` / `or` over lazily evaluated operands: a compile-time (non-tensor) operand
    short-circuits or drops out, the tensors left are combined with logical_and / logical_or."""
    tensors = []
    value = None
    for operand in operands:
        value = operand()
        if not isinstance(value, tl.tensor):
            truth = bool(value)
            if truth is not is_and:  # a false operand of `and`, a true operand of `or`: the result
                return value
            continue
        tensors.append(value)
    if not tensors:
        return value
    while len(tensors) >= 2:
        rhs, lhs = tensors.pop(), tensors.pop()
        tensors.append(lhs.logical_and(rhs) if is_and else lhs.logical_or(rhs))
    return tensors[0]


def not_op(operand: Any) -> Any:
    """The compiler's `not`: a tensor's logical not (`not (t == i) and mask`, FlagGems' nll_loss); a
    Python value's `not`."""
    return operand.__not__() if isinstance(operand, tl.tensor) else not operand


class _BoolOpTransformer(interp.ASTTransformer):
    """The interpreter's own rewrite, plus `a and b` -> _gpuemu_bool_op(True, lambda: a, lambda: b)."""

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        node = self.generic_visit(node)
        empty = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
        operands = [ast.Lambda(args=empty, body=value) for value in node.values]
        call = ast.Call(func=ast.Name(id=HELPER, ctx=ast.Load()),
                        args=[ast.Constant(value=isinstance(node.op, ast.And)), *operands], keywords=[])
        return ast.copy_location(call, node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        node = self.generic_visit(node)
        if not isinstance(node.op, ast.Not):
            return node
        call = ast.Call(func=ast.Name(id=NOT_HELPER, ctx=ast.Load()), args=[node.operand], keywords=[])
        return ast.copy_location(call, node)


def _int1_result(original: Callable) -> Callable:
    def compare(self, lhs, rhs):
        out = original(self, lhs, rhs)
        out.dtype = tl.int1  # the data is numpy bools already: only the type was the operand's
        return out

    return compare


def install() -> None:
    if _state["original"] is not None:
        return
    _state["original"] = interp.FunctionRewriter.ast_transformer
    # FunctionRewriter copies the interpreter module's globals into each kernel's globals.
    setattr(interp, HELPER, bool_op)
    setattr(interp, NOT_HELPER, not_op)
    interp.FunctionRewriter.ast_transformer = _BoolOpTransformer()
    builder = interp.InterpreterBuilder
    for name in COMPARISONS:  # outermost: over the compatibility layer's bfloat16 comparisons
        _state["comparisons"][name] = getattr(builder, name)
        setattr(builder, name, _int1_result(getattr(builder, name)))


def uninstall() -> None:
    if _state["original"] is None:
        return
    interp.FunctionRewriter.ast_transformer = _state["original"]
    _state["original"] = None
    for name, original in _state["comparisons"].items():
        setattr(interp.InterpreterBuilder, name, original)
    _state["comparisons"].clear()
