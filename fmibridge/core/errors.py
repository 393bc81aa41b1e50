"""Exceptions and warnings raised by fmibridge."""

from __future__ import annotations


class FmibridgeError(ValueError):
    """Bad input: the message names the file, variable or parameter and the fix."""


class AdapterError(FmibridgeError):
    """An adapter file is malformed; the message lists every problem found."""


class FMUError(FmibridgeError):
    """An FMI call failed, or an FMU lacks a capability the run needs.

    Parameters
    ----------
    function : str
        The FMI function or capability involved (``"fmi2DoStep"``,
        ``"canGetAndSetFMUstate"``).
    status : str
        What went wrong (``"error"``, ``"discard"``, ``"missing"``).
    fmu_path : str
        The FMU file.
    detail : str, optional
        One more sentence for the user.
    """

    def __init__(self, function: str, status: str, fmu_path: str, detail: str = ""):
        self.function, self.status, self.fmu_path = function, status, fmu_path
        message = f"{fmu_path}: {function} returned {status}"
        super().__init__(f"{message}. {detail}".rstrip(". ") + ".")


class FmibridgeWarning(UserWarning):
    """A run stopped before its end time; the Result says why."""
