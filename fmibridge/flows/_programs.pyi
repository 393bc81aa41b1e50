"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

import enum
from typing import Any

from fmibridge.core._functions import Function

class Op(enum.IntEnum):  # the machine's instructions
    CONST = 0
    VAR = 1
    NEG = 2
    NOT = 3
    ADD = 4
    SUB = 5
    MUL = 6
    DIV = 7
    MOD = 8
    FLOORDIV = 9
    POW = 10
    EQ = 11
    NE = 12
    LT = 13
    LE = 14
    GT = 15
    GE = 16
    CALL1 = 17
    CALL2 = 18
    MIN = 19
    MAX = 20
    AND = 21
    OR = 22
    IF_FALSE = 23
    JUMP = 24
    INT = 25
    HYPOT = 26

CONST: int
VAR: int
NEG: int
NOT: int
ADD: int
SUB: int
MUL: int
DIV: int
MOD: int
FLOORDIV: int
POW: int
EQ: int
NE: int
LT: int
LE: int
GT: int
GE: int
CALL1: int
CALL2: int
MIN: int
MAX: int
AND: int
OR: int
IF_FALSE: int
JUMP: int
INT: int
HYPOT: int
ZERO_DIVISION: int
DOMAIN: int
OVERFLOW: int
NAN_INTEGER: int
REASONS: Any
ONE_ARGUMENT: Any
TWO_ARGUMENTS: tuple[Any, ...]

class Program:
    code: object
    consts: object
    names: tuple[Any, ...]
    slots: tuple[Any, ...]
    source: str
    def __init__(
        self, code: Any, consts: Any, names: Any, source: str, slots: Any = ...
    ) -> None: ...
    def bound(self, places: Any) -> Any: ...
    def evaluate(self, v: Any) -> Any: ...

class ProgramFunction(Function):
    def __init__(
        self, programs: Any, failures: Any, n_in: int, v: Any, what: str
    ) -> None: ...

def program_function(
    program: Any, state_names: Any, constants: Any, failure: Any, what: str
) -> Any: ...
def values_with_constants(
    program: Any, places: dict[str, int], constants: Any
) -> list[float] | None: ...
