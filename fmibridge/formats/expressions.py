"""A small safe evaluator for the expressions in adapter files.

An expression is checked node by node against a whitelist (numbers, names,
arithmetic, comparisons, `and`/`or`/`not`, `a if c else b`, and calls of the
math functions below by name), then compiled once and evaluated with no
builtins. Attribute access, subscripts, lambdas, comprehensions, keyword
arguments, strings and calls of anything else are rejected, so an adapter file
from elsewhere cannot run code.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping
from dataclasses import dataclass

from ..core.errors import FmibridgeError

FUNCTIONS = {
    name: getattr(math, name)
    for name in (
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "atan2",
        "sinh",
        "cosh",
        "tanh",
        "exp",
        "log",
        "log10",
        "sqrt",
        "hypot",
        "floor",
        "ceil",
        "copysign",
    )
} | {"abs": abs, "min": min, "max": max}
CONSTANTS = {"pi": math.pi}

_ALLOWED_NODES = (
    ast.Expression,
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.Compare,
    ast.IfExp,
    ast.Call,
    ast.Name,
    ast.Load,
    ast.Constant,
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.Pow,
    ast.Mod,
    ast.FloorDiv,
    ast.USub,
    ast.UAdd,
    ast.Not,
    ast.And,
    ast.Or,
    ast.Eq,
    ast.NotEq,
    ast.Lt,
    ast.LtE,
    ast.Gt,
    ast.GtE,
)


@dataclass(frozen=True)
class Expression:
    """A checked, compiled expression over named variables.

    Examples
    --------
    >>> Expression.parse("-e * v", {"e", "v"})({"e": 0.8, "v": 2.0})
    -1.6
    """

    source: str
    names: frozenset[str]
    _code: object

    @classmethod
    def parse(
        cls, source: object, known: set[str] | frozenset[str], where: str = ""
    ) -> Expression:
        """Check `source` and compile it; names must be in `known`.

        Raises
        ------
        FmibridgeError
            Naming `where` (file and key), the expression and what is wrong.
        """
        prefix = f"{where}: " if where else ""
        if isinstance(source, bool) or not isinstance(source, str | int | float):
            raise FmibridgeError(
                f"{prefix}expected an expression or a number, got {source!r}."
            )
        text = str(source)
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError as exc:
            raise FmibridgeError(
                f"{prefix}malformed expression {text!r}: {exc.msg}."
            ) from None
        names = set()
        for node in ast.walk(tree):
            _check_node(node, text, prefix)
            if isinstance(node, ast.Name) and not _is_function_name(node, tree):
                names.add(node.id)
        unknown = sorted(names - set(known) - set(CONSTANTS))
        if unknown:
            raise FmibridgeError(
                f"{prefix}unknown name(s) {unknown} in {text!r}; known names are "
                f"{sorted(known)}."
            )
        code = compile(tree, f"<{where or 'expression'}>", "eval")
        return cls(text, frozenset(names), code)

    def __call__(self, values: Mapping[str, float]) -> float:
        return eval(self._code, {"__builtins__": {}}, _Scope(values))  # noqa: S307 - checked AST


class _Scope(dict):
    """Names visible to an expression: the values, then constants and functions."""

    def __init__(self, values: Mapping[str, float]) -> None:
        super().__init__(CONSTANTS)
        self.update(FUNCTIONS)
        self.update(values)


def _is_function_name(node: ast.Name, tree: ast.AST) -> bool:
    return any(isinstance(c, ast.Call) and c.func is node for c in ast.walk(tree))


def _check_node(node: ast.AST, text: str, prefix: str) -> None:
    if not isinstance(node, _ALLOWED_NODES):
        raise FmibridgeError(
            f"{prefix}{type(node).__name__} is not allowed in {text!r}: adapter "
            f"expressions may use numbers, names, arithmetic, comparisons and the "
            f"functions {sorted(FUNCTIONS)}."
        )
    if isinstance(node, ast.Constant) and (
        isinstance(node.value, bool) or not isinstance(node.value, int | float)
    ):
        raise FmibridgeError(
            f"{prefix}only numbers are allowed as literals in {text!r}."
        )
    if isinstance(node, ast.Call):
        if not (isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS):
            called = (
                node.func.id
                if isinstance(node.func, ast.Name)
                else ast.unparse(node.func)
            )
            raise FmibridgeError(
                f"{prefix}call of {called!r} is not allowed in {text!r}; only "
                f"{sorted(FUNCTIONS)} may be called."
            )
        if node.keywords:
            raise FmibridgeError(
                f"{prefix}keyword arguments are not allowed in {text!r}."
            )
