"""What the compiled FMU loop sees of a Model Exchange flow: calls and programs.

`fmu_kernels` takes an FMU as the tuple (calls, input vrs, output vrs, code,
consts, starts): the FMU's C functions, then `flows.programs` for its
time-varying inputs and for the guards of a mode. `Plan` holds all but the
calls, built once per guard tuple; `None` stands for "not offered": a guard
that is neither the FMU's own event indicator nor an expression over its
states, outputs and t (`program`, `program_flow`), or an input that is a
Python function or a table. The method then steps in Python, with the same
results.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import programs
from .input_table import InputTable

SCALAR_REALS = ("Real", "Float64")  # what get and set of reals read and write


@dataclass(frozen=True)
class Plan:
    """The programs of one mode's guards and the flow's inputs, packed.

    Attributes
    ----------
    in_vrs, out_vrs : numpy.ndarray
        uint32: the inputs the programs set, the outputs the guards read.
    code, consts, starts : numpy.ndarray
        The programs packed (`programs.packed`): the inputs', then the guards'.
    nz : int
        The event indicators to read (0 where no guard reads one).
    """

    in_vrs: np.ndarray
    out_vrs: np.ndarray
    code: np.ndarray
    consts: np.ndarray
    starts: np.ndarray
    nz: int

    def fmu(self, instance) -> tuple:
        """The `fmu_kernels` tuple with the instance's calls as they are now."""
        calls = np.concatenate((instance.c_calls, instance.c_reals))
        return (calls, self.in_vrs, self.out_vrs, self.code, self.consts, self.starts)


def plan(flow, guards) -> Plan | None:
    """Return the Plan of `flow` (a ModelExchangeFlow) with these guards, or None."""
    inputs = _input_programs(flow)
    if inputs is None:
        return None
    nx = len(flow.state_names)
    own = [getattr(g.fn, "fmu_flow", None) is flow for g in guards]
    nz = flow.instance.nz if any(own) else 0
    places = {"t": 0, **{name: 1 + i for i, name in enumerate(flow.state_names)}}
    out_vrs, codes, consts = [], [code for code, _ in inputs], [c for _, c in inputs]
    for guard, is_own in zip(guards, own, strict=True):
        if is_own:
            codes.append(np.array([[programs.VAR, 1 + nx + guard.fn.indicator_index]]))
            consts.append(np.empty(0))
            continue
        program = getattr(guard.fn, "program", None)
        if program is None or getattr(guard.fn, "program_flow", None) is not flow:
            return None
        for name in program.names:
            if name not in places:
                vr = _scalar_real(flow, name)
                if vr is None:
                    return None
                places[name] = 1 + nx + nz + len(out_vrs)
                out_vrs.append(vr)
        codes.append(program.bound(places))
        consts.append(program.consts)
    vrs = [variable.vr for variable, _ in _varying(flow)]
    return Plan(
        np.array(vrs, dtype=np.uint32),
        np.array(out_vrs, dtype=np.uint32),
        *programs.packed(codes, consts),
        nz,
    )


def _varying(flow) -> list:
    """The inputs that vary in time: (variable, u), u a function or a table."""
    return [
        (variable, u)
        for variable, u in flow._inputs.values()
        if callable(u) or isinstance(u, InputTable)
    ]


def _input_programs(flow) -> list | None:
    """Each varying input's (code, consts) over V = [t], or None if one is a
    table, a Python function, or not a scalar real."""
    found = []
    for variable, u in _varying(flow):
        program = getattr(u, "program", None)
        if (
            program is None
            or set(program.names) - {"t"}
            or _scalar_real(flow, variable.name) is None
        ):
            return None
        found.append((program.bound({"t": 0}), program.consts))
    return found


def _scalar_real(flow, name: str) -> int | None:
    """The value reference of a scalar real variable `name`, or None."""
    variable = flow.archive.variables.get(name)
    if variable is None or variable.type not in SCALAR_REALS or variable.shape:
        return None
    return variable.vr
