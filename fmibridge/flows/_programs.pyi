"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from typing import Any

from fmibridge.core._functions import Function

# the machine's instructions (values: the .pyx)
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
