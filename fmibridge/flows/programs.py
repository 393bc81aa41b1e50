"""Programs: checked expressions as postfix code that compiled loops evaluate.

An adapter's guards and inputs are expressions (`formats.expressions`). For a
compiled loop to evaluate them, each becomes a `Program`: a list of
instructions (op, argument) over a stack, that read named variables and
constants. `program_kernels.evaluate` runs them, compiled once per machine,
so no code is generated per expression and none from the user's text.

A loop places the variables in a vector V and `Program.bound` replaces each
name by its place. The instructions follow Python's float semantics one
operation at a time (`and`/`or` and `a if c else b` skip what Python skips),
so a value that is finite is Python's value; any operation that gives a
non-finite value makes the whole result NaN, where Python may raise, and the
loop then leaves that step to the Python path, which raises the exact error.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Instructions: (op, argument); "push" puts a value on the stack, the others
# replace their operands by the result, `jump` arguments are instruction numbers.
CONST, VAR = 0, 1  # push consts[arg] / push V[arg]
NEG, NOT = 2, 3
ADD, SUB, MUL, DIV, MOD, FLOORDIV, POW = 4, 5, 6, 7, 8, 9, 10
EQ, NE, LT, LE, GT, GE = 11, 12, 13, 14, 15, 16
CALL1, CALL2 = 17, 18  # a function of one or two arguments: arg names it
MIN, MAX = 19, 20  # of the top `arg` values
AND, OR = 21, 22  # keep the top and jump to arg if it decides, else drop it
IF_FALSE, JUMP = 23, 24  # pop and jump to arg if zero / jump to arg

# The functions of CALL1 and CALL2, by their number.
ONE_ARGUMENT = (
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "exp",
    "log",
    "log10",
    "sqrt",
    "abs",
    "floor",
    "ceil",
)
TWO_ARGUMENTS = ("atan2", "copysign", "log")  # log(x, base)


@dataclass(frozen=True)
class Program:
    """An expression as instructions over named variables and constants.

    Attributes
    ----------
    code : numpy.ndarray
        int64, shape (n, 2): each row (op, argument).
    consts : numpy.ndarray
        float64, the constants that CONST pushes.
    names : tuple of str
        The variables VAR reads, by its argument.
    source : str
        The expression's text, for messages.
    """

    code: np.ndarray
    consts: np.ndarray
    names: tuple[str, ...]
    source: str

    def bound(self, places: dict[str, int]) -> np.ndarray:
        """Return the code with each VAR reading V[places[name]] instead."""
        code = self.code.copy()
        reads = code[:, 0] == VAR
        code[reads, 1] = [places[self.names[k]] for k in code[reads, 1]]
        return code


def packed(codes: list[np.ndarray], consts: list[np.ndarray]):
    """Return several programs' bound code and constants as three flat arrays:
    code (op, argument pairs), consts, and starts (program k is instructions
    starts[k]:starts[k + 1]), each CONST and jump shifted to its place."""
    flat_code, flat_consts, starts = [], [], [0]
    offset_c = 0
    for code, values in zip(codes, consts, strict=True):
        code = code.copy()
        code[code[:, 0] == CONST, 1] += offset_c
        jumps = np.isin(code[:, 0], (AND, OR, IF_FALSE, JUMP))
        code[jumps, 1] += starts[-1]
        flat_code.append(code)
        flat_consts.append(values)
        starts.append(starts[-1] + len(code))
        offset_c += len(values)
    return (
        np.ascontiguousarray(np.concatenate(flat_code or [np.empty((0, 2))]).ravel(),
                             dtype=np.int64),
        np.ascontiguousarray(np.concatenate(flat_consts or [np.empty(0)]),
                             dtype=float),
        np.array(starts, dtype=np.int64),
    )  # fmt: skip
