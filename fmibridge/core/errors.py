"""Exceptions and warnings raised by fmibridge, SIGTERM raised as one, and the
"did you mean" of a misspelled name."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

EXIT_INTERRUPTED = 130  # 128 + SIGINT: the shell's code for a run stopped by Ctrl-C
EXIT_TERMINATED = 143  # 128 + SIGTERM


class FmibridgeError(ValueError):
    """Bad input: the message names the file, variable or parameter and the fix."""


class AdapterError(FmibridgeError):
    """An adapter file is malformed; the message lists every problem found."""


class ExpressionError(FmibridgeError):
    """An adapter file's expression failed at run time; the message names the
    file, key, expression, time and values."""


class FMUError(FmibridgeError):
    """An FMI call failed, or an FMU lacks a capability the run needs.

    Parameters
    ----------
    function : str
        The FMI function or capability (``"fmi2DoStep"``).
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
    """A run's Result is not all that was asked for; the Result says why."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so that a run stops the same way."""


def exit_code(interrupt: BaseException) -> int:
    """The shell's exit code for a run stopped by Ctrl-C (130) or SIGTERM (143)."""
    return EXIT_TERMINATED if isinstance(interrupt, Terminated) else EXIT_INTERRUPTED


@contextlib.contextmanager
def sigterm_raises() -> Iterator[None]:
    """Raise Terminated on the first SIGTERM inside the block (main thread
    only); later ones are ignored, so the samples are still kept."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    raised = False

    def terminate(signum: int, frame: object) -> None:
        nonlocal raised
        if not raised:
            raised = True
            raise Terminated(f"signal {signum} (SIGTERM)")

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class ReplayRefused(FMUError):
    """A Co-Simulation FMU without state saving refused fmiReset (no replay)."""


class StiffnessStop(FmibridgeError):
    """Raised by an explicit adaptive integrator whose steps are held by
    stability, not the tolerance (Hairer and Wanner, Solving ODEs II, Sec.
    IV.2); the run ends with `Status.STIFF`."""


class FlowTerminated(Exception):  # noqa: N818 - an outcome, not an error
    """Raised by a flow whose FMU ended the simulation inside a step, at (t, x)."""

    def __init__(self, t: float, x: np.ndarray) -> None:
        super().__init__(f"the FMU ended the simulation at t = {t!r}")
        self.t, self.x = t, x


def did_you_mean(name: str, known: Sequence[str], show: Callable = repr) -> str:
    """Return ' (did you mean a or b?)' with the names in `known` nearest
    `name` (`show` writes each), or ''."""
    import difflib  # only for a misspelled name

    close = difflib.get_close_matches(name, known, n=2)
    return f" (did you mean {' or '.join(map(show, close))}?)" if close else ""
