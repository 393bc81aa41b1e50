"""`simulate(model, ...)`: one call for the common case, with FMPy's keywords.

The keywords of `fmpy.simulate_fmu` keep FMPy's meaning and defaults (the FMU's
DefaultExperiment, FMPy's output grid); `t_eval` is solve_ivp's. A keyword that
does not apply to the model or method is refused, never ignored.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import math
import pickle
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, cast

import numpy as np

from .core.errors import FmibridgeError, FmibridgeWarning
from .core.integrators import Scheme
from .core.limits import TIMEOUT_GRACE_S
from .core.numbers import finite, positive
from .core.output_grid import OutputGrid
from .core.recorder import recording
from .core.records import Status
from .core.result import Result
from .core.span import check_count, check_span, check_step
from .core.system import HybridSystem, Mode
from .core.time_limit import time_limit
from .flows.base import VectorField
from .flows.fmi import logged_calls, printed_log
from .flows.native import NativeFlow
from .fmpy_keywords import SOLVERS, fixed_problems, refuse_unknown
from .methods import Method, is_a, method_named

if TYPE_CHECKING:
    from .core.guards import Edge, Guard
    from .flows.fmu_archive import FmuArchive
    from .methods.completion import Completion

Keywords = Mapping[str, Any]  # simulate's keywords as given, by name
Model: TypeAlias = "str | Path | FmuArchive | HybridSystem"
GuardSpec: TypeAlias = "Edge | tuple[Guard | Callable, Callable]"
JACOBIAN_STEP = 2.0**-26  # forward differences of `is_stiff`: about sqrt(eps)
GRID_RTOL = 1e-9  # an output time this near (per interval) to stop_time is it
MAX_OUTPUT_INTERVALS = 1000  # FMPy 0.3's simulateME/simulateCS default grid
EVERY_STEP = "steps"  # output_interval that keeps every accepted step


def simulate(
    model: Model,
    *,
    start_time: float | None = None,
    stop_time: float | None = None,
    output_interval: float | str | None = None,
    t_eval: Sequence[float] | None = None,
    start_values: Mapping[str, object] | None = None,
    parameters: Mapping[str, object] | None = None,
    input: object = None,  # noqa: A002 - FMPy's name
    output: Sequence[str] | None = None,
    fmi_type: str | None = None,
    relative_tolerance: float | None = None,
    step_size: float | None = None,
    solver: str | None = None,
    record_events: bool = True,
    debug_logging: bool = False,
    fmi_call_logger: Callable[[str], None] | None = None,
    validate: bool = True,
    method: str | Method | None = None,
    method_options: Mapping[str, object] | None = None,
    zeno: str | None = None,
    zeno_eps: float | None = None,
    guards: Sequence[GuardSpec] = (),
    timeout: float | None = None,
    progress: bool = False,
    **fmpy_keywords: object,
) -> Result:
    """Simulate a model and return its Result; the keywords mirror `fmpy.simulate_fmu`.

    Parameters
    ----------
    model : path, FmuArchive or HybridSystem
        An FMU (.fmu), SSP (.ssp) or adapter file (.toml), an FmuArchive, or a
        HybridSystem.
    start_time, stop_time : float, optional
        The span, s; default: the FMU's DefaultExperiment (an adapter's `t_end`).
    output_interval : float or 'steps', optional
        Sample spacing, s (default FMPy's grid), plus each event's two rows;
        ``'steps'`` keeps every accepted step.
    t_eval : sequence of float, optional
        The output times, as in `scipy.integrate.solve_ivp`.
    start_values, parameters : mapping, optional
        Start values and parameters of the FMU (an adapter's [parameters]) by name;
        a HybridSystem's start values are its states'.
    input : mapping, structured array or DataFrame, optional
        FMU inputs by name: numbers, functions u(t) or tables (`input_values`).
    output : sequence of str, optional
        FMU variables to record besides the states (default: every output).
    fmi_type : {'ModelExchange', 'CoSimulation', 'me', 'cs'}, optional
        The FMU interface (default: Model Exchange where offered).
    relative_tolerance : float, optional
        The FMU's `tolerance`, and the rtol of the method's adaptive steps.
    step_size : float, optional
        The method's step h, s (Co-Simulation: the communication step).
    solver : {'Euler', 'CVode'}, optional
        FMPy's solver: the 'euler' or 'cvode' integrator.
    record_events, debug_logging, validate : bool
        FMPy's: keep event rows; print the FMU's log; refuse an invalid FMU.
    fmi_call_logger : callable, optional
        Called with each FMI call as text in FMPy's format; the run stays here.
    method : str or Method, optional
        'halving' (default), 'relaxation', 'unilateral', or a Method instance.
    method_options : mapping, optional
        Options of the method named by `method` (``eps``, ``integrator``, ...).
    zeno : {'off', 'complete'}, optional
        'complete' continues Zeno executions (`Completion`, Or and Ames).
    zeno_eps : float, optional
        The truncation budget of ``zeno='complete'`` (eps_t, eps_q, eps_v).
    guards : sequence, optional
        Extra guards of an FMU: Edges of mode ``"model"``, or (guard, reset) pairs.
    timeout : float, optional
        Wall time, s, after which the run stops with `Status.TIME_LIMIT`; a model
        file then runs in a supervised process, killed `TIMEOUT_GRACE_S` later.
    progress : bool
        Show a progress bar on a terminal.
    **fmpy_keywords
        FMPy's other keywords, at the values of `fmpy_keywords.FIXED`.

    Returns
    -------
    Result
        ``result['time']``, ``result.to_structured()`` (FMPy's array), ...

    Raises
    ------
    FmibridgeError
        For keywords that do not apply (all in one message), a bad variable or span.
    TypeError
        For a keyword neither fmibridge's nor FMPy's (with the nearest names).

    Examples
    --------
    >>> from fmibridge.models import bouncing_ball
    >>> result = simulate(bouncing_ball(), stop_time=1.0, output_interval=0.5,
    ...                   start_values={"h": 2.0})
    >>> result["time"].round(6).tolist()  # the grid, and the impact's two rows
    [0.0, 0.5, 0.638551, 0.638551, 1.0]
    >>> round(float(result["h"][1]), 12)  # 2 - g / 2 * 0.5**2
    0.77375
    """
    if t_eval is not None and output_interval is not None:
        raise FmibridgeError("Give `output_interval` or `t_eval`, not both.")
    refuse_unknown(fmpy_keywords, KEYWORDS)
    given = {  # the keywords not left at their defaults
        k: v
        for k, v in locals().items()
        if k in KEYWORDS and v is not SIGNATURE[k].default
    }
    for name, check in NUMBERS.items():
        if name in given:
            check(name, given[name])
    kind, problems = _kind(model), fixed_problems(fmpy_keywords)
    if "validate" in given and not isinstance(model, str | Path | HybridSystem):
        problems.append(
            "`validate`: an FmuArchive is validated as it is read; "
            "give FmuArchive(path, validate=False)"
        )
    _refuse(kind, given, problems)
    if timeout is not None:
        supervised = _supervised(model, kind, {**given, **fmpy_keywords})
        if supervised is not None:
            return supervised
    if solver is not None and not isinstance(method, Method):  # FMPy's integrator
        options = {**given.get("method_options", {}), "integrator": SOLVERS[solver]}
        given["method_options"] = options
    logged = printed_log() if debug_logging else contextlib.nullcontext()
    with time_limit(timeout), logged, logged_calls(fmi_call_logger):
        if isinstance(model, HybridSystem):
            start = cast(Mapping[str, float] | None, start_values)  # checked there
            system = model.with_initial(start, start_time)
        elif kind == "adapter":
            return _run_adapter(Path(cast(str | Path, model)), given, progress)
        else:
            system = _open(model, given, kind)
        try:
            return _run(system, given, progress, kind)
        finally:
            if kind in ("fmu", "ssp"):
                system.close()


def _supervised(model: Model, kind: str, keywords: Keywords) -> Result | None:
    """Run a model file supervised, so `timeout` stops a hung FMU; None (after a
    warning where an FMU may hang) for a run that stays here."""
    from .core import supervision

    if supervision.is_child():
        return None
    why = ""  # why the run stays in this process
    if kind == "system":
        from .flows.compiled import CompiledFlow

        flows = cast(HybridSystem, model).flows()
        if all(isinstance(flow, NativeFlow | CompiledFlow) for flow in flows):
            return None  # Python and compiled code return between steps
        why = "a HybridSystem runs in this process"
    elif keywords.get("fmi_call_logger") is not None:
        why = "`fmi_call_logger` is called in this process"
    else:
        try:
            pickle.dumps(keywords)
        except Exception as exc:  # noqa: BLE001 - any object that does not pickle
            why = f"a keyword's value cannot go to another process ({exc})"
    if why:
        warnings.warn(
            f"`timeout`: {why}; the limit is looked at between steps and cannot "
            f"stop an FMU hung in its own code (give the model's file and plain "
            f"values to run it supervised).",
            FmibridgeWarning,
            stacklevel=3,
        )
        return None
    if not isinstance(model, str | Path):
        archive = cast("FmuArchive", model)
        if not archive.is_validated:
            keywords = {**keywords, "validate": False}
        model = archive.path
    path = Path(model)
    with recording() as record:
        try:
            return supervision.shared().call(
                simulate,
                {"model": path, **keywords},
                timeout=keywords["timeout"],
                grace=TIMEOUT_GRACE_S,
                what=str(path),
            )
        except supervision.TimeLimitExceeded as exc:
            partial = record.result(Status.TIME_LIMIT, {"system": str(path)}, str(exc))
            if partial is None:
                raise
    warnings.warn(
        f"Run stopped at t = {partial.t[-1]:.6g} s: {partial.message}",
        FmibridgeWarning,
        stacklevel=3,
    )
    return partial


def _run(system: HybridSystem, given: Keywords, progress: bool, kind: str) -> Result:
    """Run an opened system with its span, grid and method."""
    experiment = system.experiment
    stop = given["stop_time"] if "stop_time" in given else experiment.stop
    if stop is None:
        raise FmibridgeError(
            f"`stop_time` is needed: {system.name} gives no default stop time."
        )
    t_end = check_span(system.t0, stop, "stop_time")
    span = t_end - system.t0
    given = _with_model_defaults(system, given, kind, span)
    interval = given.get("output_interval")  # a step if shorter than the run
    shorter = (
        interval if isinstance(interval, int | float) and interval < span else None
    )
    h = given.get("step_size") or min(
        (s for s in (experiment.step, shorter) if s is not None), default=None
    )
    runner = _checked(_method(given, h), system, given, kind)
    if kind == "ssp" and "step_size" not in given:
        runner = _with_stable_step(runner, system)
    grid = _grid(system.t0, t_end, runner, given)
    if not runner.is_adaptive:  # adaptive steps: h is the first, not their size
        check_step(runner.h, system.t0, t_end, runner.max_steps, "step_size")
    result = runner.run(system, t_end, progress=progress, t_eval=grid)
    return _recorded(result, grid, given)


SIGNATURE = inspect.signature(simulate).parameters
KEYWORDS = tuple(SIGNATURE)[1:-1]  # all but `model` and **fmpy_keywords
# checked as they enter (`core.numbers`): a NaN tolerance never reaches an FMU
NUMBERS = {
    "start_time": finite,
    "step_size": positive,
    "relative_tolerance": positive,
    "zeno_eps": positive,
    "timeout": positive,  # before a supervised run waits on it
}
REFUSED = {  # model kind -> keyword -> what to do instead
    "system": {
        "parameters": "a HybridSystem's parameters are set when it is built",
        "fmi_type": "a HybridSystem has no FMI interface",
        "input": "give u(t) to the flow: NativeFlow(f, names, inputs=u)",
        "output": "a HybridSystem records its states; outputs are an FMU's",
        "guards": "add the edges to the system's modes",
        "validate": "a HybridSystem has no model description to validate",
        "fmi_call_logger": "a HybridSystem's FMUs were instantiated before this "
        "call, without the logger; simulate the FMU's (or adapter's) file",
    },
    "ssp": {
        "start_time": "an SSP starts at its DefaultExperiment's startTime",
        "start_values": "an SSP's values are set in its SSD (or an adapter file)",
        "parameters": "an SSP's values are set in its SSD (or an adapter file)",
        "input": "an SSP's inputs are connections in its SSD",
        "relative_tolerance": "an SSP passes its FMUs' default tolerances",
        "validate": "an SSP's FMUs are validated; fix the one that fails",
    },
    "adapter": {
        "start_time": "an adapter starts at its FMU's DefaultExperiment startTime",
        "input": "give the inputs in the file's [inputs] table",
        "guards": "give the guards in the file's [[edges]]",
        "validate": "an adapter's FMU is validated; fix the FMU it names",
    },
}


def _kind(model: Model) -> str:
    """'system', 'fmu', 'ssp' or 'adapter'."""
    if isinstance(model, HybridSystem):
        return "system"
    if not isinstance(model, str | Path):
        from .flows.fmu_archive import FmuArchive

        if isinstance(model, FmuArchive):
            return "fmu"
        raise FmibridgeError(
            f"`model` must be an FMU or adapter file path, an FmuArchive or a "
            f"HybridSystem, got {type(model).__name__}."
        )
    suffix = Path(model).suffix.lower()
    kinds = {".fmu": "fmu", ".ssp": "ssp", ".toml": "adapter"}
    if suffix not in kinds:
        raise FmibridgeError(
            f"{model}: expected an FMU (.fmu), an SSP (.ssp) or an adapter file "
            f"(.toml)."
        )
    return kinds[suffix]


def _refuse(kind: str, given: Keywords, problems: list[str]) -> None:
    """Refuse, in one error, every keyword ignored, not honoured or mistyped."""
    problems = [
        *problems,
        *(f"`{k}`: {why}" for k, why in REFUSED.get(kind, {}).items() if k in given),
        *_container_problems(given),
    ]
    method = given.get("method")
    if isinstance(method, Method):
        name = type(method).__name__
        problems += [
            f"`{key}`: give it to the Method ({name}(...))"
            for key in ("step_size", "method_options", "solver")
            if key in given
        ]
    if given.get("solver", "CVode") not in SOLVERS:
        problems.append(
            f"`solver` must be FMPy's 'Euler' or 'CVode', got {given['solver']!r}; "
            "fmibridge's integrators are `method_options={'integrator': ...}`: "
            "'rk4', 'midpoint', 'euler', 'dopri5' or 'cvode'"
        )
    options = given.get("method_options", {})
    if not isinstance(options, Mapping):
        problems.append("`method_options`: must be a mapping of option names")
    elif "h" in options:
        problems.append("`method_options`: the step h is `step_size`")
    elif "solver" in given and "integrator" in options:
        problems.append("`solver`: give it or method_options `integrator`, not both")
    problems += [
        f"`{name}` must be True or False, got {given[name]!r}"
        for name in ("record_events", "debug_logging", "validate")
        if name in given and not isinstance(given[name], bool)
    ]
    if "fmi_call_logger" in given and not callable(given["fmi_call_logger"]):
        problems.append(
            f"`fmi_call_logger` must be a function of one str (print, a list's "
            f"append), got {given['fmi_call_logger']!r}"
        )
    interval = given.get("output_interval")
    steps = interval == EVERY_STEP
    number = isinstance(interval, int | float) and not isinstance(interval, bool)
    if not (steps or interval is None or number and 0 < interval < math.inf):
        problems.append(
            f"`output_interval` must be a finite number > 0 or {EVERY_STEP!r} "
            f"(every step), got {interval!r}"
        )
    if given.get("record_events") is False and steps:
        problems.append(
            "`record_events=False`: every step (output_interval='steps') includes "
            "the steps that end at events; give an output grid to drop event rows"
        )
    if problems:
        raise FmibridgeError(
            f"simulate: {len(problems)} keyword problem(s) with this {kind}:\n  "
            + "\n  ".join(problems)
        )


def _container_problems(given: Keywords) -> list[str]:
    """Keywords of variable names in another container (a str read letter by letter)."""
    problems = [
        f"`{name}` must be a mapping of variable name to value (a dict), got "
        f"{type(given[name]).__name__}"
        for name in ("start_values", "parameters")
        if given.get(name) is not None and not isinstance(given[name], Mapping)
    ]
    output = given.get("output")
    if isinstance(output, str) or not isinstance(output, Iterable | None):
        problems.append(
            f"`output` must be a list of variable names, got {output!r}"
            + (f" (for one variable, [{output!r}])" if isinstance(output, str) else "")
        )
    return problems


# the keyword that gives each DefaultExperiment value (`Experiment`) explicitly
EXPERIMENT_KEYWORDS = {
    "start": "start_time",
    "stop": "stop_time",
    "step": "step_size",
    "tolerance": "relative_tolerance",
}


def _open(model: str | Path | FmuArchive, given: Keywords, kind: str) -> HybridSystem:
    """Open an FMU or an SSP as a one-mode system, with the extra guards."""
    from .flows.fmu import FmuArchive, fmu_system

    outputs = None if given.get("output") is None else list(given["output"])
    if kind == "ssp":
        from .formats.ssp import ssp_system

        path = Path(cast(str | Path, model))
        system = ssp_system(path, interface=given.get("fmi_type"), outputs=outputs)
    else:
        archive = model
        if not isinstance(archive, FmuArchive):
            archive = FmuArchive(Path(archive), validate=given.get("validate", True))
        for name, problem in archive.experiment.invalid.items():
            keyword = EXPERIMENT_KEYWORDS[name]  # a keyword that replaces it
            if given.get(keyword) is not None:
                warnings.warn(
                    f"{problem} It is ignored: `{keyword}` = {given[keyword]!r} "
                    f"is used.",
                    FmibridgeWarning,
                    stacklevel=3,
                )
        system = fmu_system(
            archive,
            given.get("fmi_type"),
            parameters=given.get("parameters"),
            start=given.get("start_values"),
            inputs=input_values(given.get("input")),
            outputs=outputs,
            t0=given.get("start_time"),
            tolerance=given.get("relative_tolerance"),
        )
    try:
        return _with_guards(system, given.get("guards", ()))
    except BaseException:
        system.close()
        raise


def _with_guards(system: HybridSystem, guards: Sequence[GuardSpec]) -> HybridSystem:
    """`system` (one mode) with extra edges, declared before its own."""
    if not guards:
        return system
    from .core.guards import Edge  # loaded where guards are given

    (mode,) = system.modes.values()
    edges = []
    for k, item in enumerate(guards):
        if isinstance(item, Edge):
            edges.append(item)
        elif isinstance(item, tuple) and len(item) == 2:
            edges.append(Edge(item[0], mode.name, item[1]))
        else:
            raise FmibridgeError(
                f"`guards[{k}]` must be an Edge or a (guard, reset) pair, got {item!r}."
            )
    modes = [Mode(mode.name, mode.flow, (*edges, *mode.edges))]
    return dataclasses.replace(system, modes=modes)  # type: ignore[arg-type]


def _run_adapter(path: Path, given: Keywords, progress: bool) -> Result:
    """Load and run an adapter file with the keywords that override it."""
    from .formats.adapters import load_adapter

    method = given.get("method")
    options = dict(given.get("method_options", {}))
    if "step_size" in given:
        options["h"] = given["step_size"]
    adapter = load_adapter(
        path,
        method=method if isinstance(method, str) else None,
        method_options=options or None,
        t_end=given.get("stop_time"),
        interface=given.get("fmi_type"),
        zeno=given.get("zeno") if not isinstance(method, Method) else None,
        parameters=given.get("parameters"),
        start=given.get("start_values"),
        outputs=given.get("output"),
    )
    with adapter:
        runner = _method(given, None) if isinstance(method, Method) else adapter.method
        runner = _checked(runner, adapter.system, given, "adapter")
        adapter = dataclasses.replace(adapter, method=runner)
        grid = _grid(adapter.system.t0, adapter.t_end, runner, given)
        result = adapter.run(progress=progress, t_eval=grid)
    return _recorded(result, grid, given)


def _method(given: Keywords, h: float | None) -> Method:
    """The Method: an instance as given, or one by name with h and options."""
    method, zeno = given.get("method"), given.get("zeno")
    if zeno not in (None, "off", "complete"):
        raise FmibridgeError(f"`zeno` must be 'off' or 'complete', got {zeno!r}.")
    if not isinstance(method, Method):
        name = "halving" if method is None else method
        options = dict(given.get("method_options", {}))
        if h is not None:
            options["h"] = h
        method = method_named(name, options)  # `_checked` gives it rtol
    if zeno == "complete" and not is_a(method, "Completion"):
        from .methods.completion import Completion

        method = Completion(method)
    return method


def _checked(
    method: Method, system: HybridSystem, given: Keywords, kind: str
) -> Method:
    """Refuse an `integrator` the method ignores; apply rtol and `zeno_eps`."""
    completion, inner = _split(method)
    is_cs = not all(isinstance(flow, VectorField) for flow in system.flows())
    named = "integrator" in given.get("method_options", {})
    if named:
        name = "solver" if "solver" in given else "integrator"
        if is_a(inner, "Unilateral"):
            raise FmibridgeError(
                f"`{name}`: `method` 'unilateral' ignores it (its Adams "
                f"predictor-corrector is built in); drop it."
            )
        if is_cs:
            raise FmibridgeError(
                f"`{name}`: a Co-Simulation FMU integrates itself and ignores "
                f"it; drop it, or use `fmi_type` 'me'."
            )
    rtol = given.get("relative_tolerance")
    if rtol is not None and isinstance(given.get("method"), Method):
        if not (kind == "fmu" and is_cs):  # else the FMU's own solver takes it
            raise FmibridgeError(
                "`relative_tolerance`: give it to the Method (its rtol, "
                f"{type(inner).__name__}(rtol=...))."
            )
    elif rtol is not None and (
        is_a(inner, "Unilateral") or inner.tolerates and not is_cs
    ):
        if is_a(inner, "Unilateral"):
            inner = dataclasses.replace(inner, rtol=rtol)  # type: ignore[call-arg]
        else:  # the rtol of its adaptive steps
            integrator = inner.integrator if named else None
            inner = dataclasses.replace(inner, rtol=rtol, integrator=integrator)  # type: ignore[call-arg]
        if completion is not None:
            completion = dataclasses.replace(completion, inner=inner, integrator=None)
        method = inner if completion is None else completion
    if "zeno_eps" not in given:
        return method
    if completion is None:
        raise FmibridgeError(
            "`zeno_eps`: only a run with `zeno` 'complete' truncates Zeno executions."
        )
    eps = given["zeno_eps"]
    return dataclasses.replace(completion, eps=eps, eps_t=eps, eps_q=eps, eps_v=eps)


def _split(method: Method) -> tuple[Completion | None, Method]:
    """The Completion `method` is, if it is one (`is_a`), and the method it steps."""
    completion = cast("Completion", method) if is_a(method, "Completion") else None
    return completion, method if completion is None else completion.inner


# keywords that choose how a model is stepped: with none of them given, a plain
# FMU takes the defaults its model calls for (`_with_model_defaults`)
STEPPING = ("method", "method_options", "solver", "step_size", "guards", "zeno")


def _with_model_defaults(
    system: HybridSystem, given: Keywords, kind: str, span: float
) -> Keywords:
    """`given` with FMPy's stepping for a plain FMU (ME: dopri5 or cvode; CS: h)."""
    if kind != "fmu" or any(key in given for key in STEPPING):
        return given
    if all(isinstance(flow, VectorField) for flow in system.flows()):
        integrator = "cvode" if is_stiff(system, span) else "dopri5"
        given = {**given, "method_options": {"integrator": integrator}}
        if "output_interval" not in given and "t_eval" not in given:
            grid = default_output_interval(span, fmpy_step(span))
            given["output_interval"] = grid  # FMPy's grid of an ME run
        return given
    interval = given.get("output_interval")
    if isinstance(interval, int | float) and interval < span:  # FMPy's step
        return {**given, "step_size": float(interval)}
    (flow,) = system.flows()  # the FMU's, with its DefaultExperiment
    own, fixed = system.experiment.step, cast(Any, flow).archive.fixed_internal_step
    step = fmpy_communication_step(fixed if own is None else own, span)
    return {**given, "step_size": min(step, span)}


# A model is stiff for an explicit integrator where its fastest decay rate
# times the span exceeds this: Dormand-Prince's stability bound, |h lam| <= 3.3,
# then holds it to 3e5 steps or more whatever the accuracy asked for
# (Hairer and Wanner, Solving ODEs II, Sec. IV.2); Dormand-Prince's own
# stiffness detection stops a run only beyond that (`_stepper.STIFF_STEPS_LEFT`).
STIFF_SPAN = 1e6
MAX_JACOBIAN_STATES = 200  # larger models are not probed (n + 1 FMU calls)


def is_stiff(system: HybridSystem, span: float) -> bool:
    """True if the largest abs(real part) of the initial Jacobian's eigenvalues
    (`poles`) times `span` exceeds STIFF_SPAN."""
    found = poles(system)
    return found is not None and float(np.max(np.abs(found.real))) * span > STIFF_SPAN


def poles(system: HybridSystem) -> np.ndarray | None:
    """Return the eigenvalues of the initial mode's Jacobian at t0 (forward
    differences), or None without dx/dt, for too many states or a non-finite one."""
    flow = system.modes[system.initial_mode].flow
    x, n = np.asarray(system.x0, dtype=float), len(system.x0)
    if not 0 < n <= MAX_JACOBIAN_STATES or not isinstance(flow, VectorField):
        return None
    f0, steps = flow.rhs(system.t0, x), JACOBIAN_STEP * np.maximum(1.0, np.abs(x))
    jacobian = np.column_stack(
        [(flow.rhs(system.t0, x + dx) - f0) / dx.max() for dx in np.diag(steps)]
    )
    if not np.all(np.isfinite(jacobian)):
        return None
    return np.linalg.eigvals(jacobian)


def _with_stable_step(method: Method, system: HybridSystem) -> Method:
    """`method` with a step stable on the model's fastest pole at t0, if its is not."""
    completion, inner = _split(method)
    scheme = getattr(inner, "integrator", None)
    if not isinstance(scheme, Scheme) or inner.is_adaptive:
        return method
    found = poles(system)
    rate = 0.0 if found is None else float(np.max(np.abs(found)))
    if inner.h * rate <= scheme.stability_boundary:
        return method
    inner = dataclasses.replace(inner, h=scheme.stable_step(rate))  # type: ignore[call-arg]
    if completion is None:
        return inner
    return dataclasses.replace(completion, inner=inner, h=inner.h)


def fmpy_step(span: float) -> float:
    """Return FMPy's default step of a run of `span` s: the power of ten
    nearest to a thousandth of the span."""
    return 10.0 ** (round(math.log10(span)) - 3)


def fmpy_communication_step(step: float | None, span: float) -> float:
    """Return FMPy's default communication step of a Co-Simulation run of
    `span` s: `step` doubled until at most MAX_OUTPUT_INTERVALS steps, else
    `fmpy.util.auto_interval`.

    Examples
    --------
    >>> fmpy_communication_step(None, 1.5)
    0.002
    """
    if step is not None:
        return default_output_interval(span, step)
    from fmpy.util import auto_interval

    return float(auto_interval(span))


def default_output_interval(span: float, h: float) -> float:
    """Return FMPy's default output interval of a run of `span` s in steps
    of h: h doubled until at most MAX_OUTPUT_INTERVALS intervals."""
    k = 0
    while span / (h * 2**k) > MAX_OUTPUT_INTERVALS:
        k += 1
    return h * 2**k


def _grid(
    t0: float, t_end: float, runner: Method, given: Keywords
) -> np.ndarray | None:
    """The output times (None: every step), refused beyond `runner.max_steps`."""
    interval = given.get("output_interval")
    if interval == EVERY_STEP:
        return None
    if interval is None and "t_eval" not in given:
        interval = default_output_interval(t_end - t0, runner.h)
    if interval is not None:
        check_count(interval, t0, t_end, runner.max_steps, "output_interval")
    return output_times(t0, t_end, interval, given.get("t_eval"))


def _recorded(result: Result, grid: np.ndarray | None, given: Keywords) -> Result:
    """The Result without event rows off the grid where `record_events` is False."""
    if given.get("record_events", True) or grid is None or not len(result.t):
        return result
    t = result.t
    k = np.minimum(np.searchsorted(grid, t), len(grid) - 1)  # np.isin loads numpy.ma
    keep = (grid[k] == t) & np.append(np.diff(t) > 0, True)
    keep[-1] = True
    return dataclasses.replace(
        result,
        t=t[keep],
        x=result.x[keep],
        mode=result.mode[keep],
        outputs={name: values[keep] for name, values in result.outputs.items()},
    )


def output_times(
    t0: float,
    t_end: float,
    interval: float | None,
    t_eval: Sequence[float] | None = None,
) -> np.ndarray | None:
    """Return t0 + k * interval up to t_end (and t_end), or t_eval, or None.

    Examples
    --------
    >>> output_times(0.0, 1.0, 0.3).tolist()
    [0.0, 0.3, 0.6, 0.8999999999999999, 1.0]
    """
    if t_eval is not None:
        return OutputGrid(t_eval, t0, t_end).times
    if interval is None:
        return None
    positive("output_interval", interval)  # a caller's own: simulate's are checked
    n = math.floor((t_end - t0) / interval * (1 + GRID_RTOL))
    times = t0 + interval * np.arange(n + 1)
    if t_end - times[-1] <= GRID_RTOL * interval:
        times[-1] = t_end
    else:
        times = np.append(times, t_end)
    return times


def input_values(data: object) -> dict[str, object]:
    """Return FMU inputs by name from a mapping, FMPy's structured array or a
    DataFrame (a 'time' column, else the index).

    Examples
    --------
    >>> rows = [(0.0, 1.0), (1.0, 3.0)]
    >>> signals = np.array(rows, dtype=[("time", float), ("u", float)])
    >>> input_values(signals)["u"].value(0.5, held=False)
    2.0
    """
    if data is None:
        return {}
    if isinstance(data, Mapping):
        return dict(data)
    from .flows.input_table import InputTable  # loaded where a table is given

    if isinstance(data, np.ndarray) and data.dtype.names:
        t_name, *names = data.dtype.names
        return {n: InputTable(data[t_name], data[n], n) for n in names}
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        t = data["time"] if "time" in data.columns else data.index
        names = [c for c in data.columns if c != "time"]
        return {
            str(n): InputTable(np.asarray(t), data[n].to_numpy(), str(n)) for n in names
        }
    raise FmibridgeError(
        f"`input` must be a mapping of input names, a structured array with time "
        f"first (FMPy's) or a DataFrame, got {type(data).__name__}."
    )
