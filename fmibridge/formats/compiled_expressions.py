"""Checked expressions as programs (`flows.programs.Program`) for the compiled loops.

`program_of` walks the tree that `Expression.parse` checked against its
whitelist and rewrote to compute in floats, and emits one instruction per
node, in Python's order of evaluation: nothing is generated from the text,
and nothing is run. Names given values (the adapter's parameters) become
constants, the others variables that the loop supplies.

An expression is left to Python (None) where the machine's float operations
could differ from Python's: `hypot` (Python's is not the C library's), and
arithmetic on a comparison's result (True and False are integers in Python,
whose zero has no sign).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

import numpy as np

from ..flows import programs as p
from .expressions import Expression

BINARY = {
    ast.Add: p.ADD,
    ast.Sub: p.SUB,
    ast.Mult: p.MUL,
    ast.Div: p.DIV,
    ast.Mod: p.MOD,
    ast.FloorDiv: p.FLOORDIV,
}
COMPARE = {
    ast.Eq: p.EQ,
    ast.NotEq: p.NE,
    ast.Lt: p.LT,
    ast.LtE: p.LE,
    ast.Gt: p.GT,
    ast.GtE: p.GE,
}


class _NotCompiled(Exception):  # noqa: N818 - a signal inside program_of
    """The expression holds something the machine would not compute as Python."""


def program_of(expr: Expression, constants: Mapping[str, float]) -> p.Program | None:
    """Return `expr` as a Program, its names in `constants` read as those
    numbers; None where it must stay in Python (module docstring).

    Examples
    --------
    >>> expr = Expression.parse("-e * v", {"e", "v"})
    >>> program = program_of(expr, {"e": 0.8})
    >>> program.names, program.consts.tolist()
    (('v',), [0.8])
    """
    emitter = _Emitter(constants)
    try:
        emitter.emit(expr.tree.body)
    except _NotCompiled:
        return None
    return p.Program(
        np.array(emitter.code, dtype=np.int64).reshape(-1, 2),
        np.array(emitter.consts, dtype=float),
        tuple(emitter.names),
        expr.source,
    )


class _Emitter:
    """Emits the instructions of a checked tree; `emit` returns True where the
    node's value may be a bool or an int (a comparison's result)."""

    def __init__(self, constants: Mapping[str, float]) -> None:
        self.constants = constants
        self.code: list[list[int]] = []
        self.consts: list[float] = []
        self.names: list[str] = []

    def add(self, op: int, arg: int = 0) -> list[int]:
        self.code.append([op, arg])
        return self.code[-1]

    def push(self, value: float) -> None:
        self.consts.append(float(value))
        self.add(p.CONST, len(self.consts) - 1)

    def floats(self, *nodes: ast.expr) -> None:
        """Emit operands of arithmetic: each must be a float in Python too."""
        for node in nodes:
            if self.emit(node):
                raise _NotCompiled

    def emit(self, node: ast.expr) -> bool:
        method = getattr(self, f"emit_{type(node).__name__}", None)
        if method is None:  # pragma: no cover - the checker allows no other node
            raise _NotCompiled
        return method(node)

    def emit_Constant(self, node: ast.Constant) -> bool:
        self.push(node.value)
        return not isinstance(node.value, float)  # a folded comparison: True

    def emit_Name(self, node: ast.Name) -> bool:
        if node.id in self.constants:
            self.push(self.constants[node.id])
        else:
            if node.id not in self.names:
                self.names.append(node.id)
            self.add(p.VAR, self.names.index(node.id))
        return False

    def emit_UnaryOp(self, node: ast.UnaryOp) -> bool:
        if isinstance(node.op, ast.Not):
            self.emit(node.operand)
            self.add(p.NOT)
            return True
        self.floats(node.operand)
        if isinstance(node.op, ast.USub):
            self.add(p.NEG)
        return False  # +x is x for a float

    def emit_BinOp(self, node: ast.BinOp) -> bool:
        self.floats(node.left, node.right)
        self.add(BINARY[type(node.op)])
        return False

    def emit_Call(self, node: ast.Call) -> bool:
        name, args = node.func.id[:-2], node.args  # "sin()" -> "sin"
        self.floats(*args)
        if name == "pow":
            self.add(p.POW)
        elif name in ("min", "max"):
            self.add(p.MIN if name == "min" else p.MAX, len(args))
        elif len(args) == 2 and name in p.TWO_ARGUMENTS:
            self.add(p.CALL2, p.TWO_ARGUMENTS.index(name))
        elif len(args) == 1 and name in p.ONE_ARGUMENT:
            self.add(p.CALL1, p.ONE_ARGUMENT.index(name))
        else:  # hypot
            raise _NotCompiled
        return False

    def emit_Compare(self, node: ast.Compare) -> bool:
        """a < b < c as (a < b) and (b < c): b is pure, so computing it twice
        gives its one value."""
        exits, left = [], node.left
        for k, (op, right) in enumerate(zip(node.ops, node.comparators, strict=True)):
            self.emit(left)
            self.emit(right)
            self.add(COMPARE[type(op)])
            if k < len(node.ops) - 1:
                exits.append(self.add(p.AND))
            left = right
        for jump in exits:
            jump[1] = len(self.code)
        return True

    def emit_BoolOp(self, node: ast.BoolOp) -> bool:
        op = p.AND if isinstance(node.op, ast.And) else p.OR
        exits, maybe_int = [], False
        for k, value in enumerate(node.values):
            maybe_int |= self.emit(value)
            if k < len(node.values) - 1:
                exits.append(self.add(op))
        for jump in exits:
            jump[1] = len(self.code)
        return maybe_int

    def emit_IfExp(self, node: ast.IfExp) -> bool:
        self.emit(node.test)
        to_else = self.add(p.IF_FALSE)
        maybe_int = self.emit(node.body)
        to_end = self.add(p.JUMP)
        to_else[1] = len(self.code)
        maybe_int |= self.emit(node.orelse)
        to_end[1] = len(self.code)
        return maybe_int
