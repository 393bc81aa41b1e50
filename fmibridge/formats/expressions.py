"""A small safe evaluator, of bounded cost, for the expressions in adapter files.

An expression is checked node by node against a whitelist (numbers, names,
arithmetic, comparisons, `and`/`or`/`not`, `a if c else b`, calls of
FUNCTIONS by name), so a file from elsewhere cannot run code; `a.b` is one
name (`component.variable`). Its cost is bounded: at most MAX_LENGTH
characters and MAX_DEPTH nested operations, and it computes in floats (`**` is
`math.pow`), with its constant parts computed at check time. The stack machine
of `flows._programs` is its only evaluator; a failure at run time raises one
ExpressionError naming the expression and the values it read.
"""

from __future__ import annotations

import ast
import dataclasses
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from ..core.errors import ExpressionError, FmibridgeError
from ..flows import _programs as _op  # the machine's instructions: _op.ADD, ...
from ..flows._programs import ONE_ARGUMENT, REASONS, TWO_ARGUMENTS, Program

BINARY = {
    ast.Add: _op.ADD,
    ast.Sub: _op.SUB,
    ast.Mult: _op.MUL,
    ast.Div: _op.DIV,
    ast.Mod: _op.MOD,
    ast.FloorDiv: _op.FLOORDIV,
}
COMPARE = {
    ast.Eq: _op.EQ,
    ast.NotEq: _op.NE,
    ast.Lt: _op.LT,
    ast.LtE: _op.LE,
    ast.Gt: _op.GT,
    ast.GtE: _op.GE,
}
# The largest integer a float holds exactly: beyond it Python's integers and the
# machine's floats differ.
EXACT_INTEGERS = 2.0**53


def _largest(*bounds: float | None) -> float | None:
    """The largest of the bounds that are not None (None if all are)."""
    return max((b for b in bounds if b is not None), default=None)


class _Emitter:
    """Emits a checked tree; `emit` bounds a node's integer (None: a float)."""

    def __init__(self, shown: str, where: str) -> None:
        self.shown, self.where = shown, where  # the expression and its key, named
        self.code: list[list[int]] = []
        self.consts: list[float] = []
        self.names: list[str] = []

    def program(self, node: ast.expr, source: str) -> Program:
        """The program of the checked (sub)tree `node` of the expression `source`."""
        self.emit(node)
        return Program(self.code, self.consts, self.names, source)

    def add(self, op: int, arg: int = 0) -> list[int]:
        self.code.append([int(op), arg])
        return self.code[-1]

    def emit(self, node: ast.expr) -> float | None:
        bound = getattr(self, f"emit_{type(node).__name__}")(node)
        if bound is not None and bound > EXACT_INTEGERS:
            raise FmibridgeError(
                f"{self.where}{self.shown} computes integers from comparisons (True "
                f"and False count as 1 and 0) that may exceed 2**53, beyond exact "
                f"floats; write such terms as floats, e.g. (1.0 if a < b else 0.0)."
            )
        return bound

    def emit_Constant(self, node: ast.Constant) -> float | None:
        value = cast(float, node.value)  # a number: `_check_node` checked it
        self.consts.append(float(value))
        is_float = isinstance(value, float)
        self.add(_op.CONST if is_float else _op.INT, len(self.consts) - 1)
        return None if is_float else abs(float(value))  # a folded comparison

    def emit_Name(self, node: ast.Name) -> None:
        if node.id not in self.names:
            self.names.append(node.id)
        self.add(_op.VAR, self.names.index(node.id))

    def emit_UnaryOp(self, node: ast.UnaryOp) -> float | None:
        bound = self.emit(node.operand)
        if isinstance(node.op, ast.Not):
            self.add(_op.NOT)
            return 1.0
        if isinstance(node.op, ast.USub):
            self.add(_op.NEG)
        return bound  # +x is x

    def emit_BinOp(self, node: ast.BinOp) -> float | None:
        a, b = self.emit(node.left), self.emit(node.right)
        op = BINARY[type(node.op)]
        self.add(op)
        if a is None or b is None or op == _op.DIV:
            return None
        if op in (_op.ADD, _op.SUB):
            return a + b
        if op == _op.MUL:
            return a * b
        return b if op == _op.MOD else a  # |a // b| <= |a| for integers b != 0

    def emit_Call(self, node: ast.Call) -> float | None:
        name, args = cast(ast.Name, node.func).id[:-2], node.args  # "sin()" -> "sin"
        bounds = [self.emit(arg) for arg in args]
        if name == "pow":
            self.add(_op.POW)
        elif name in ("min", "max"):
            self.add(_op.MIN if name == "min" else _op.MAX, len(args))
            return _largest(*bounds)  # one of the arguments, as it is
        elif name == "hypot":
            self.add(_op.HYPOT, len(args))
        elif len(args) == 2 and name in TWO_ARGUMENTS:
            self.add(_op.CALL2, TWO_ARGUMENTS.index(name))
        else:
            self.add(_op.CALL1, ONE_ARGUMENT.index(name))
        return None

    def emit_Compare(self, node: ast.Compare) -> float:
        """a < b < c as (a < b) and (b < c) (b is pure)."""
        exits, left = [], node.left
        for k, (op, right) in enumerate(zip(node.ops, node.comparators, strict=True)):
            self.emit(left)
            self.emit(right)
            self.add(COMPARE[type(op)])
            if k < len(node.ops) - 1:
                exits.append(self.add(_op.AND))
            left = right
        for jump in exits:
            jump[1] = len(self.code)
        return 1.0

    def emit_BoolOp(self, node: ast.BoolOp) -> float | None:
        op = _op.AND if isinstance(node.op, ast.And) else _op.OR
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
        to_else = self.add(_op.IF_FALSE)
        body = self.emit(node.body)
        to_end = self.add(_op.JUMP)
        to_else[1] = len(self.code)
        orelse = self.emit(node.orelse)
        to_end[1] = len(self.code)
        return _largest(body, orelse)


# characters: the longest expression in adapters/ has 13; 1000 parse and check
# in about a millisecond.
MAX_LENGTH = 1000
# nested operations: a sum of n terms nests n deep; Python's compiler
# recurses once a level and fails near 1000.
MAX_DEPTH = 64


# The functions an expression may call: the machine's (`flows._programs`).
FUNCTIONS = (*dict.fromkeys((*ONE_ARGUMENT, *TWO_ARGUMENTS)), "hypot", "min", "max")
# (fewest, most) arguments of the functions that do not take exactly one
ARITY = {"atan2": (2, 2), "copysign": (2, 2), "log": (1, 2), "hypot": (1, math.inf)}
ARITY |= dict.fromkeys(("min", "max"), (2, math.inf))
CONSTANTS = {"pi": math.pi}
# Calls are rewritten to names no expression can spell ("sin()"), so a variable
# called `max` cannot hide the function; `a ** b` becomes "pow()"(a, b).
# The nodes allowed: the operators the machine has instructions for, and these.
_ALLOWED_NODES: tuple[type[ast.AST], ...] = (*BINARY, *COMPARE) + tuple(
    getattr(ast, name)
    for name in "Pow Not USub UAdd And Or Expression BinOp UnaryOp BoolOp Compare "
    "IfExp Call Name Load Constant".split()
)


@dataclass(frozen=True)
class Expression:
    """A checked expression over named variables, as a program for the machine.

    `tree` is the checked syntax tree, rewritten to compute in floats, from which
    `program` was emitted.

    Examples
    --------
    >>> Expression.parse("-e * v", {"e", "v"})({"e": 0.8, "v": 2.0})
    -1.6
    >>> Expression.parse("2 ** 10", set())({})
    1024.0
    """

    source: str
    names: frozenset[str]  # the variables it reads
    program: Program = dataclasses.field(repr=False, compare=False)
    tree: ast.Expression = dataclasses.field(repr=False, compare=False)  # checked

    @classmethod
    def parse(
        cls, source: object, known: set[str] | frozenset[str], where: str = ""
    ) -> Expression:
        """Check `source` and emit its program; names must be in `known`. An
        FmibridgeError names `where` (file and key), the expression and the fault."""
        prefix = f"{where}: " if where else ""
        if isinstance(source, bool) or not isinstance(source, str | int | float):
            raise FmibridgeError(
                f"{prefix}expected an expression or a number, got {source!r}."
            )
        text = str(source)
        shown = _shown(text)
        if len(text) > MAX_LENGTH:
            raise FmibridgeError(
                f"{prefix}expression {shown} has {len(text)} characters; at most "
                f"{MAX_LENGTH} are allowed."
            )
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError as exc:
            raise FmibridgeError(
                f"{prefix}malformed expression {shown}: {exc.msg}."
            ) from None
        names = _checked_names(tree, shown, prefix)
        unknown = sorted(names - set(known) - set(CONSTANTS))
        if unknown:
            raise FmibridgeError(
                f"{prefix}unknown name(s) {unknown} in {shown}; known names are "
                f"{sorted(known)}."
            )
        constants = {k: v for k, v in CONSTANTS.items() if k not in known}
        tree = _Compiler(constants, shown, prefix).visit(tree)
        program = _Emitter(shown, prefix).program(tree.body, text)
        return cls(text, frozenset(names - set(constants)), program, tree)

    def __call__(self, values: Mapping[str, float]) -> float:
        """Evaluate with the variables in `values`; raise ExpressionError on failure."""
        scope = [float(values[name]) for name in self.program.names]
        value, failure, _ = self.program.evaluate(scope)
        if failure or not math.isfinite(value):
            named = dict(zip(self.program.names, scope, strict=True))
            raise self.failure(named, failure, value)
        return value

    def failure(
        self, values: Mapping[str, float], failure: int, value: float
    ) -> ExpressionError:
        """Return the error of an evaluation with `values` that failed
        (`flows._programs.REASONS`) or gave `value`, not finite."""
        reason = REASONS[failure] if failure else f"the result is {value}"
        inputs = ", ".join(f"{k} = {v!r}" for k, v in sorted(values.items()))
        failed = f"{_shown(self.source)} failed" + (f" with {inputs}" if inputs else "")
        return ExpressionError(f"{failed}: {reason}.")


def _fold_dotted_names(node: ast.AST) -> None:
    """Read each `a.b.c` child of `node` as the one name "a.b.c", in place."""
    for field, value in ast.iter_fields(node):
        if isinstance(value, list):
            value[:] = [_dotted_name(item) for item in value]
        elif isinstance(value, ast.AST):
            setattr(node, field, _dotted_name(value))


def _dotted_name(node: ast.AST) -> ast.AST:
    """An attribute chain on a name as one Name, other nodes as they are."""
    parts, inner = [], node
    while isinstance(inner, ast.Attribute):
        parts.append(inner.attr)
        inner = inner.value
    if not parts or not isinstance(inner, ast.Name):
        return node
    name = ".".join([inner.id, *reversed(parts)])
    return ast.copy_location(ast.Name(id=name, ctx=ast.Load()), node)


def _shown(text: str) -> str:
    """`text` quoted for a message, cut short if it is long."""
    return repr(text) if len(text) <= 60 else f"{text[:50]!r}..."


def _checked_names(tree: ast.Expression, shown: str, prefix: str) -> set[str]:
    """Check every node of `tree` iteratively, dotted names folded; return its names."""
    names, called = set(), set()
    deepest: list[tuple[ast.AST, int]] = [(tree, 0)]
    while deepest:
        node, depth = deepest.pop()
        if depth > MAX_DEPTH:
            raise FmibridgeError(
                f"{prefix}expression {shown} nests deeper than {MAX_DEPTH} operations."
            )
        _check_node(node, shown, prefix)
        _fold_dotted_names(node)
        if isinstance(node, ast.Call):
            called.add(id(node.func))
        elif isinstance(node, ast.Name) and id(node) not in called:
            names.add(node.id)
        deepest.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return names


def _check_node(node: ast.AST, shown: str, prefix: str) -> None:
    """Refuse a node off the whitelist, a non-finite literal and a wrong call."""
    if not isinstance(node, _ALLOWED_NODES):
        raise FmibridgeError(
            f"{prefix}{type(node).__name__} is not allowed in {shown}: adapter "
            f"expressions may use numbers, names, arithmetic, comparisons and the "
            f"functions {sorted(FUNCTIONS)}."
        )
    value = node.value if isinstance(node, ast.Constant) else 0
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FmibridgeError(
            f"{prefix}only numbers are allowed as literals in {shown}."
        )
    if not abs(value) <= sys.float_info.max:  # compared exactly, never converted
        raise FmibridgeError(
            f"{prefix}the number {str(value)[:20]} in {shown} is not a finite float."
        )
    if not isinstance(node, ast.Call):
        return
    if not (isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS):
        called = (
            node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
        )
        raise FmibridgeError(
            f"{prefix}call of {called!r} is not allowed in {shown}; only "
            f"{sorted(FUNCTIONS)} may be called."
        )
    if node.keywords:
        raise FmibridgeError(f"{prefix}keyword arguments are not allowed in {shown}.")
    fewest, most = ARITY.get(node.func.id, (1, 1))
    if not fewest <= len(node.args) <= most:
        ranges = {fewest: f"{fewest}", math.inf: f"at least {fewest}"}
        expected = ranges.get(most, f"{fewest} or {most}")
        raise FmibridgeError(
            f"{prefix}{node.func.id}() takes {expected} argument(s), got "
            f"{len(node.args)} in {shown}."
        )


class _Compiler(ast.NodeTransformer):
    """Rewrite a checked tree in floats (`f(x)` as "f()", `**` as "pow()"), each
    node of constants only run here (a failure reported now) and replaced."""

    def __init__(self, constants: Mapping[str, float], shown: str, prefix: str):
        self.constants, self.shown, self.prefix = constants, shown, prefix

    def visit_Constant(self, node: ast.Constant) -> ast.Constant:
        return ast.copy_location(ast.Constant(float(cast(float, node.value))), node)

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in self.constants:
            return ast.copy_location(ast.Constant(self.constants[node.id]), node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.expr:
        node.args = [self.visit(arg) for arg in node.args]
        node.func = ast.Name(f"{cast(ast.Name, node.func).id}()", ast.Load())
        return self._folded(node, node.args)

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.op, ast.Pow):
            pow_call = ast.Call(
                ast.Name("pow()", ast.Load()), [node.left, node.right], []
            )
            call = ast.copy_location(pow_call, node)
            return self._folded(call, call.args)
        return self._folded(node, [node.left, node.right])

    def generic_expr(self, node: ast.expr) -> ast.expr:
        self.generic_visit(node)
        operands = [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)]
        return self._folded(node, operands)

    visit_UnaryOp = visit_BoolOp = visit_Compare = visit_IfExp = generic_expr

    def _folded(self, node: ast.expr, operands: list[ast.expr]) -> ast.expr:
        """Return `node` computed into a constant if its operands are constants."""
        if not all(isinstance(x, ast.Constant) for x in operands):
            return node
        emitter = _Emitter(self.shown, self.prefix)
        value, failure, is_int = emitter.program(node, self.shown).evaluate(())
        if not failure and math.isfinite(value):
            if is_int:
                is_bool = isinstance(node, ast.Compare) or isinstance(
                    getattr(node, "op", None), ast.Not
                )
                value = bool(value) if is_bool else int(value)
            return ast.copy_location(ast.Constant(value), node)
        reason = REASONS[failure] if failure else f"the result is {value}"
        part = ast.unparse(node).replace("()(", "(")
        part = part if len(part) <= 60 else f"{part[:50]}..."
        raise FmibridgeError(f"{self.prefix}{part} in {self.shown} fails: {reason}.")
