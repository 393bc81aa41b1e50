"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from typing import Any

import numpy as np

from fmibridge.core._functions import Function
from fmibridge.flows._programs import ProgramFunction

FMI_WARNING: Any
FUNCTIONS: Any

class FmuReals:
    def __init__(
        self,
        component: int,
        get_reals: int,
        set_reals: int,
        counts_values: bool,
        names: Any,
        error: Any,
    ) -> None: ...

class FmuCalls(FmuReals):
    nx: int
    nz: int
    def __init__(
        self,
        addresses: Any,
        component: int,
        counts_values: bool,
        nx: int,
        nz: int,
        names: Any,
        error: Any,
        path: str,
    ) -> None: ...
    def attach(self, inputs: FmuInputs) -> Any: ...
    def touched(self) -> Any: ...
    def close(self) -> Any: ...
    def forget_time(self) -> Any: ...
    def note_time(self, t: float) -> Any: ...
    def set_time_and_states(self, t: float, x: Any) -> Any: ...
    def derivatives(self, t: float, x: Any) -> Any: ...
    def event_indicators(self, t: float, x: Any) -> Any: ...
    def set_inputs(self, t: float) -> Any: ...

class FmuInputs:
    def __init__(self, vrs: Any, sources: Any, others: Any = ...) -> None: ...

def check_finite(values: Any, what: str, path: str, t: float) -> Any: ...
def input_value(
    ts: np.ndarray, us: np.ndarray, t: float, held: bool, after: bool = ...
) -> float: ...

class FmuRhs(Function):
    def __init__(self, calls: FmuCalls, path: str) -> None: ...

class FmuIndicators(Function):
    def __init__(self, calls: FmuCalls, path: str) -> None: ...

class FmuProgram(ProgramFunction):
    def __init__(
        self,
        calls: FmuCalls,
        programs: Any,
        failures: Any,
        v: Any,
        out_vrs: Any,
        first_output: int,
        what: str,
    ) -> None: ...
