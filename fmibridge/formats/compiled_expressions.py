"""Checked expressions as programs (`flows._programs.Program`) for the stack machine.

`emit` emits one instruction per node of a checked tree, in Python's order of
evaluation. The machine holds integers (from comparisons) as floats, exact up
to 2**53, so `emit` refuses an expression whose integers could exceed that:
the machine's value is then Python's.
"""

from __future__ import annotations

import ast
from typing import cast

from ..flows import _programs

_Op = _programs.Op  # the machine's instructions

BINARY = {
    ast.Add: _Op.ADD,
    ast.Sub: _Op.SUB,
    ast.Mult: _Op.MUL,
    ast.Div: _Op.DIV,
    ast.Mod: _Op.MOD,
    ast.FloorDiv: _Op.FLOORDIV,
}
COMPARE = {
    ast.Eq: _Op.EQ,
    ast.NotEq: _Op.NE,
    ast.Lt: _Op.LT,
    ast.LtE: _Op.LE,
    ast.Gt: _Op.GT,
    ast.GtE: _Op.GE,
}
# The largest integer a float holds exactly: beyond it Python's integers and the
# machine's floats differ.
EXACT_INTEGERS = 2.0**53


def emit(node: ast.expr, source: str) -> _programs.Program:
    """Return the program of the checked (sub)tree `node` of the expression
    `source` (its text, for messages).

    Raises
    ------
    IntegersTooLarge
        If the integers it computes from comparisons could exceed 2**53.

    Examples
    --------
    >>> from fmibridge.formats.expressions import Expression
    >>> program = Expression.parse("-e * v", {"e", "v"}).program
    >>> program.names, program.evaluate([0.8, 2.0])[0]
    (('e', 'v'), -1.6)
    """
    emitter = _Emitter()
    emitter.emit(node)
    return _programs.Program(emitter.code, emitter.consts, emitter.names, source)


class IntegersTooLarge(Exception):  # noqa: N818 - `Expression.parse` reports it
    """An expression's integers (from comparisons) may exceed EXACT_INTEGERS."""


def _largest(*bounds: float | None) -> float | None:
    """The largest of the bounds that are not None (None if all are)."""
    return max((b for b in bounds if b is not None), default=None)


class _Emitter:
    """Emits the instructions of a checked tree; `emit` returns the largest
    magnitude of the integer a node may give (None: a float)."""

    def __init__(self) -> None:
        self.code: list[list[int]] = []
        self.consts: list[float] = []
        self.names: list[str] = []

    def add(self, op: int, arg: int = 0) -> list[int]:
        self.code.append([int(op), arg])
        return self.code[-1]

    def emit(self, node: ast.expr) -> float | None:
        bound = getattr(self, f"emit_{type(node).__name__}")(node)
        if bound is not None and bound > EXACT_INTEGERS:
            raise IntegersTooLarge
        return bound

    def emit_Constant(self, node: ast.Constant) -> float | None:
        value = cast(float, node.value)  # a number: `expressions` checked it
        self.consts.append(float(value))
        is_float = isinstance(value, float)
        self.add(_Op.CONST if is_float else _Op.INT, len(self.consts) - 1)
        return None if is_float else abs(float(value))  # a folded comparison

    def emit_Name(self, node: ast.Name) -> None:
        if node.id not in self.names:
            self.names.append(node.id)
        self.add(_Op.VAR, self.names.index(node.id))

    def emit_UnaryOp(self, node: ast.UnaryOp) -> float | None:
        bound = self.emit(node.operand)
        if isinstance(node.op, ast.Not):
            self.add(_Op.NOT)
            return 1.0
        if isinstance(node.op, ast.USub):
            self.add(_Op.NEG)
        return bound  # +x is x

    def emit_BinOp(self, node: ast.BinOp) -> float | None:
        a, b = self.emit(node.left), self.emit(node.right)
        op = BINARY[type(node.op)]
        self.add(op)
        if a is None or b is None or op == _Op.DIV:
            return None
        if op in (_Op.ADD, _Op.SUB):
            return a + b
        if op == _Op.MUL:
            return a * b
        return b if op == _Op.MOD else a  # |a // b| <= |a| for integers b != 0

    def emit_Call(self, node: ast.Call) -> float | None:
        name, args = cast(ast.Name, node.func).id[:-2], node.args  # "sin()" -> "sin"
        bounds = [self.emit(arg) for arg in args]
        if name == "pow":
            self.add(_Op.POW)
        elif name in ("min", "max"):
            self.add(_Op.MIN if name == "min" else _Op.MAX, len(args))
            return _largest(*bounds)  # one of the arguments, as it is
        elif name == "hypot":
            self.add(_Op.HYPOT, len(args))
        elif len(args) == 2 and name in _programs.TWO_ARGUMENTS:
            self.add(_Op.CALL2, _programs.TWO_ARGUMENTS.index(name))
        else:
            self.add(_Op.CALL1, _programs.ONE_ARGUMENT.index(name))
        return None

    def emit_Compare(self, node: ast.Compare) -> float:
        """a < b < c as (a < b) and (b < c) (b is pure)."""
        exits, left = [], node.left
        for k, (op, right) in enumerate(zip(node.ops, node.comparators, strict=True)):
            self.emit(left)
            self.emit(right)
            self.add(COMPARE[type(op)])
            if k < len(node.ops) - 1:
                exits.append(self.add(_Op.AND))
            left = right
        for jump in exits:
            jump[1] = len(self.code)
        return 1.0

    def emit_BoolOp(self, node: ast.BoolOp) -> float | None:
        op = _Op.AND if isinstance(node.op, ast.And) else _Op.OR
        exits, bounds = [], []
        for k, value in enumerate(node.values):
            bounds.append(self.emit(value))
            if k < len(node.values) - 1:
                exits.append(self.add(op))
        for jump in exits:
            jump[1] = len(self.code)
        return _largest(*bounds)

    def emit_IfExp(self, node: ast.IfExp) -> float | None:
        self.emit(node.test)
        to_else = self.add(_Op.IF_FALSE)
        body = self.emit(node.body)
        to_end = self.add(_Op.JUMP)
        to_else[1] = len(self.code)
        orelse = self.emit(node.orelse)
        to_end[1] = len(self.code)
        return _largest(body, orelse)
