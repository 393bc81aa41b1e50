"""Calls run in a supervised child process: native code cannot take the caller down.

An FMU's segfault, `abort()`, `exit()` or endless loop would take its process
with it. A `Supervisor` runs each call in a child interpreter (kept between
calls): a child that dies raises `ProcessDied`, one past `timeout` is killed
(`TimeLimitExceeded`), Ctrl-C or SIGTERM kills it at once. Its samples are kept
(`core.journal`) and its warnings given again in the parent.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from .errors import FmibridgeError, FmibridgeWarning
from .journal import Journal, replay
from .outputs import new_folder
from .recorder import recording
from .records import Status

if TYPE_CHECKING:  # imported where a child is started or serves
    from multiprocessing.connection import Connection

WAKE_S = 0.25  # s: how often a waiting parent wakes (signals wake it sooner)
CLOSE_S = 2.0  # s a child may take to exit once told to (then it is killed)
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a child gets when its parent dies
SERVE = "from fmibridge.core.supervision import serve; serve()"
_IS_CHILD = False  # set in the child (`serve`)


class ProcessDied(FmibridgeError):
    """The child running a call died (a signal, or an exit).

    Attributes
    ----------
    t : float or None
        The time the run had reached (its last sample), s.
    """

    def __init__(self, message: str, t: float | None = None) -> None:
        super().__init__(message)
        self.t = t

    def __reduce__(self):
        return type(self), (str(self), self.t)


class TimeLimitExceeded(ProcessDied):
    """A call did not return within its timeout; its child was killed."""


class Supervisor:
    """A child process that runs calls one at a time, started on first use.

    Examples
    --------
    >>> with Supervisor() as supervisor:  # doctest: +SKIP
    ...     supervisor.call(pow, {"base": 2, "exp": 10})
    1024
    """

    def __init__(self) -> None:
        self._process: subprocess.Popen | None = None
        self._pipes: tuple[Connection, Connection] | None = None  # jobs, replies
        self._folder: Path | None = None
        self._is_busy = False
        self._n_calls = 0

    def __enter__(self) -> Supervisor:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def call(
        self,
        fn: Callable[..., Any],
        kwargs: Mapping[str, Any],
        *,
        timeout: float | None = None,
        grace: float = 0.0,
        what: str = "the run",
    ) -> Any:
        """Return ``fn(**kwargs)``, run in the child.

        Parameters
        ----------
        fn : callable
            A module-level function; its arguments and value must pickle.
        kwargs : mapping
            Its keyword arguments.
        timeout : float, optional
            Seconds of wall time in the child before it is killed (plus `grace`).
        grace : float
            Seconds granted past `timeout` (for a run to stop itself).
        what : str
            How messages name the call (the model's file).

        Raises
        ------
        ProcessDied, TimeLimitExceeded
            The child died, or was killed at `timeout`.
        BaseException
            Whatever `fn` raised in the child.
        """
        jobs, replies, folder = self._start()
        self._n_calls += 1
        journal = folder / f"journal_{self._n_calls}.bin"
        job = (fn, dict(kwargs), journal, dict(os.environ), os.getcwd(), sys.path)
        self._is_busy = True
        try:
            jobs.send(job)
            limit = None if timeout is None else (timeout, grace)
            return self._reply(replies, limit, what, journal)
        except BaseException:
            with _signals_held():  # a second SIGTERM or Ctrl-C waits for the samples
                if self._is_busy:  # no reply: it died, timed out, Ctrl-C or SIGTERM
                    self._end_child(kill=True)
                with contextlib.suppress(Exception):
                    replay(journal)  # into the caller's recording(), if any
            raise
        finally:
            self._is_busy = False
            journal.unlink(missing_ok=True)
            if self._process is None:
                self._remove_folder()

    def close(self) -> None:
        """End the child (killing it if it is running a call) and remove its folder."""
        self._end_child(kill=self._is_busy)
        self._remove_folder()

    def _start(self) -> tuple[Connection, Connection, Path]:
        """The pipes to and from the child (the running one, or a new one)."""
        from multiprocessing.connection import Connection

        process, pipes, folder = self._process, self._pipes, self._folder
        if process is not None and pipes and folder and process.poll() is None:
            return (*pipes, folder)
        self.close()  # a child that died, and its folder
        self._folder = folder = new_folder("fmibridge_worker_")
        (jobs_in, jobs), (replies, replies_out) = os.pipe(), os.pipe()
        child_ends = (jobs_in, replies_out)
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-P", "-c", SERVE, *map(str, child_ends)]
                + [str(os.getpid()), str(folder)],
                stdin=subprocess.DEVNULL,
                pass_fds=child_ends,
                env=_same_package_env(),
            )
        except BaseException:
            os.close(jobs)
            os.close(replies)
            raise
        finally:
            for fd in child_ends:
                os.close(fd)
        pipes = Connection(jobs, readable=False), Connection(replies, writable=False)
        self._pipes = pipes
        return (*pipes, folder)

    def _reply(
        self,
        replies: Connection,
        limit: tuple[float, float] | None,
        what: str,
        journal: Path,
    ) -> Any:
        """The child's answer, its warnings given again; killed after `limit`."""
        deadline = None
        while True:
            wait = WAKE_S if deadline is None else deadline - time.monotonic()
            if wait <= 0 and limit is not None:  # a deadline comes with a limit
                self._end_child(kill=True)
                t = _time_reached(journal)
                raise TimeLimitExceeded(
                    f"{what}: the simulation did not stop at its time limit of "
                    f"{limit[0]:g} s and was killed {limit[1]:g} s later{_at(t)}; "
                    f"an FMU's own code does not return there (a hang?), or a step "
                    f"takes longer than that.",
                    t,
                )
            if not replies.poll(min(wait, WAKE_S)):
                continue
            try:
                kind, *rest = cast(tuple[Any, ...], replies.recv())  # ("kind", ...)
            except EOFError:  # the pipe closed: the child is gone
                raise self._died(what, journal) from None
            if kind == "warning":  # ("warning", category, text)
                warnings.warn(rest[1], rest[0], stacklevel=3)
            elif kind == "started":
                deadline = None if limit is None else time.monotonic() + sum(limit)
            else:
                self._is_busy = False
                if kind == "value":
                    return rest[0]
                raise rest[0]

    def _died(self, what: str, journal: Path) -> ProcessDied:
        """The error of a child that died while running a call."""
        code = self._end_child(kill=False)
        t = _time_reached(journal)
        if code is not None and code < 0:
            try:
                name = f"{signal.Signals(-code).name} ({signal.strsignal(-code)})"
            except ValueError:
                name = str(-code)
            how = f"was killed by signal {name}"
        else:
            how = f"exited with code {code} without finishing"
        return ProcessDied(
            f"{what}: the simulation process {how}{_at(t)}; native code (an FMU) "
            f"crashed or ended the process.",
            t,
        )

    def _end_child(self, kill: bool) -> int | None:
        """End the child (at once if `kill`), reap it; return its exit code."""
        process, self._process = self._process, None
        pipes, self._pipes = self._pipes, None
        for pipe in pipes or ():  # the child's loop ends at the end of its jobs
            pipe.close()
        if process is None:
            return None
        if kill:
            process.kill()
        try:
            return process.wait(timeout=CLOSE_S)
        except subprocess.TimeoutExpired:
            process.kill()
            return process.wait()

    def _remove_folder(self) -> None:
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


HELD_SIGNALS = {signal.SIGINT, signal.SIGTERM}


@contextlib.contextmanager
def _signals_held():
    """Hold SIGINT and SIGTERM until the body ends, so the cleanup after a
    cut-short call is not itself cut short (`timeout` sends SIGTERM twice)."""
    if not hasattr(signal, "pthread_sigmask"):  # Windows: nothing to hold
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, HELD_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _at(t: float | None) -> str:
    return "" if t is None else f" at t = {t:.9g} s"


def _time_reached(journal: Path) -> float | None:
    """The time of the journal's last sample, or None."""
    with recording() as record:
        replay(journal)
    partial = record.result(Status.FAILED, {})
    return None if partial is None else float(partial.t[-1])


_SHARED: dict[int, Supervisor] = {}
_SHARED_LOCK = threading.Lock()


def shared() -> Supervisor:
    """Return this thread's Supervisor, kept until `close_all` (at exit)."""
    with _SHARED_LOCK:
        if not _SHARED:
            atexit.register(close_all)
        return _SHARED.setdefault(threading.get_ident(), Supervisor())


def close_all() -> None:
    """Close every thread's Supervisor (their children end, folders go)."""
    with _SHARED_LOCK:
        supervisors = list(_SHARED.values())
        _SHARED.clear()
    for supervisor in supervisors:
        supervisor.close()


def _same_package_env() -> dict[str, str]:
    """The child's environment: this fmibridge first on its path (and -P)."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])  # the folder of `fmibridge/`
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def serve() -> None:
    """The child's loop (``python -c ... serve() JOBS REPLIES PARENT_PID FOLDER``):
    run each call read from the pipe JOBS and send back on REPLIES its
    warnings, then its value or exception, until JOBS ends."""
    from multiprocessing.connection import Connection

    global _IS_CHILD
    _IS_CHILD = True
    jobs = Connection(int(sys.argv[1]), writable=False)
    replies = Connection(int(sys.argv[2]), readable=False)
    parent, folder = int(sys.argv[3]), sys.argv[4]
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if sys.platform.startswith("linux"):  # SIGKILL when the parent dies
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it died before that
        os._exit(1)
    tempfile.tempdir = folder
    while True:
        try:
            call = jobs.recv()
            replies.send(("started",))
            reply = _run(replies, *call)
        except EOFError:  # the parent closed its end: no more calls
            break
        except Exception as exc:  # noqa: BLE001 - a call that does not unpickle here
            reply = ("error", _portable(exc))
        try:
            replies.send(reply)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            error = FmibridgeError(f"the call's value does not pickle: {exc}")
            replies.send(("error", error))


def is_child() -> bool:
    """True in a supervised child process (whose parent enforces the limits)."""
    return _IS_CHILD


def _run(replies: Connection, fn, kwargs, journal, environ, cwd, path) -> tuple:
    """Run one call as the parent would (its environment, folder and sys.path)."""
    os.environ.clear()
    os.environ.update(environ)
    os.chdir(cwd)
    sys.path[:] = path
    sink = Journal(journal)
    try:
        with warnings.catch_warnings(), recording(sink):
            warnings.simplefilter("always", FmibridgeWarning)  # the parent filters

            def show(message, category, *where, **line) -> None:
                replies.send(("warning", category, str(message)))

            warnings.showwarning = show
            try:
                return ("value", fn(**kwargs))
            except BaseException as exc:  # every ending goes back to the parent
                return ("error", _portable(exc))
    finally:
        sink.close()


def _portable(exc: BaseException) -> BaseException:
    """`exc` if it pickles, else an FmibridgeError saying what it was; an
    unexpected one carries the child's traceback as a note."""
    if not isinstance(exc, FmibridgeError | KeyboardInterrupt | SystemExit):
        exc.add_note(
            "Traceback in the simulation process:\n"
            + "".join(traceback.format_exception(exc)).rstrip()
        )
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 - an exception class that does not pickle
        return FmibridgeError(f"{type(exc).__name__}: {exc}")
