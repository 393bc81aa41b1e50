"""Where fmibridge finds SUNDIALS: the CVODE libraries fmpy ships (`fmpy.sundials`).

The compiled integrator (`flows._cvode`) calls them through the addresses of
their C functions, taken here once; it is written against SUNDIALS 7, and an
fmpy that ships another major version is refused naming it.

References
----------
Hindmarsh et al., "SUNDIALS: Suite of nonlinear and differential/algebraic
equation solvers", ACM TOMS 31 (2005); the CVODE User Guide, SUNDIALS 7.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

from ..core.errors import FmibridgeError

SUNDIALS_MAJOR = 7  # the headers `_cvode.pyx` declares the functions from

# the functions `_cvode` calls, by library (fmpy.sundials.libraries' names), in
# the order of the fields of `_cvode`'s Api
FUNCTIONS = {
    "sundials_core": (
        "SUNContext_Create",
        "SUNContext_Free",
        "SUNContext_ClearErrHandlers",
        "SUNContext_PushErrHandler",
        "N_VGetArrayPointer",
        "N_VDestroy",
        "SUNMatDestroy",
        "SUNLinSolFree",
    ),
    "sundials_nvecserial": ("N_VNew_Serial",),
    "sundials_sunmatrixdense": ("SUNDenseMatrix", "SUNDenseMatrix_Data"),
    "sundials_sunlinsoldense": ("SUNLinSol_Dense",),
    "sundials_cvode": (
        "CVodeCreate",
        "CVodeInit",
        "CVodeReInit",
        "CVodeSVtolerances",
        "CVodeSetLinearSolver",
        "CVodeSetJacFn",
        "CVodeSetUserData",
        "CVodeSetMaxStep",
        "CVodeSetStopTime",
        "CVodeClearStopTime",
        "CVodeSetMaxNumSteps",
        "CVodeSetMaxHnilWarns",
        "CVodeSetMaxOrd",
        "CVode",
        "CVodeGetDky",
        "CVodeGetCurrentStep",
        "CVodeGetNumSteps",
        "CVodeGetNumRhsEvals",
        "CVodeGetNumLinRhsEvals",
        "CVodeGetNumJacEvals",
        "CVodeGetNumErrTestFails",
        "CVodeGetNumNonlinSolvConvFails",
        "CVodeFree",
    ),
}


@functools.cache
def addresses() -> dict[str, int]:
    """Return the address of each SUNDIALS function `_cvode` calls, by name.

    Raises
    ------
    FmibridgeError
        If fmpy's SUNDIALS libraries cannot be loaded on this platform, are not
        SUNDIALS 7, or lack one of the functions.
    """
    try:
        from fmpy.sundials import libraries
    except (OSError, ImportError) as exc:
        raise FmibridgeError(
            f"The stiff integrator (CVODE) needs the SUNDIALS libraries that fmpy "
            f"ships, which did not load here: {exc}. Use a fixed-step or "
            f"explicit adaptive integrator instead."
        ) from None
    found = version(libraries.sundials_core)
    if found[0] != SUNDIALS_MAJOR:
        raise FmibridgeError(
            f"The stiff integrator (CVODE) is written against SUNDIALS "
            f"{SUNDIALS_MAJOR}.x; this fmpy ships SUNDIALS "
            f"{'.'.join(map(str, found))}. Install an fmpy that ships SUNDIALS "
            f"{SUNDIALS_MAJOR} (fmpy 0.3.32 does)."
        )
    table: dict[str, int] = {}
    for library, names in FUNCTIONS.items():
        handle = getattr(libraries, library)
        for name in names:
            pointer = getattr(handle, name, None)
            address = ctypes.cast(pointer, ctypes.c_void_p).value if pointer else None
            if address is None:
                raise FmibridgeError(
                    f"fmpy's SUNDIALS library {library} has no function {name}, "
                    f"which the stiff integrator (CVODE) calls."
                )
            table[name] = address
    return table


def version(core: Any) -> tuple[int, int, int]:
    """Return the (major, minor, patch) version of fmpy's SUNDIALS (`core`: its
    sundials_core library)."""
    get = core.SUNDIALSGetVersionNumber
    get.argtypes = [ctypes.POINTER(ctypes.c_int)] * 3 + [ctypes.c_char_p, ctypes.c_int]
    get.restype = ctypes.c_int
    parts = [ctypes.c_int() for _ in range(3)]
    label = ctypes.create_string_buffer(32)
    if get(*map(ctypes.byref, parts), label, len(label)) != 0:
        return (0, 0, 0)
    return parts[0].value, parts[1].value, parts[2].value
