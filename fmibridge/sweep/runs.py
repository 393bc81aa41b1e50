"""What one run of a sweep is: plain data (`Run`), rebuilt into a system where it
runs, so that nothing live (an FMU instance) crosses a process boundary."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import FmibridgeError
from ..core.span import check_span, check_step
from ..core.system import HybridSystem
from ..methods import Completion, method_named
from ..models.ball import bouncing_ball
from ..models.oscillator import EXAMPLE_1, EXAMPLE_2, forced_oscillator


@dataclass(frozen=True)
class Run:
    """One run of a sweep as plain data: rebuilt into a system in the worker.

    Parameters
    ----------
    model : str
        A built-in model name (see `MODELS`), an FMU path or an adapter file.
    t_end : float
        Final time, s.
    parameters, start : mapping
        Model parameters and start values by name (FMU variable names).
    method : mapping
        ``name`` (default ``"halving"``) and the method's options; ``zeno =
        "complete"`` wraps it in `Completion`.
    interface : str, optional
        ``"me"`` or ``"cs"`` for an FMU.
    """

    model: str
    t_end: float | None = None
    parameters: Mapping[str, Any] = field(default_factory=dict)
    start: Mapping[str, float] = field(default_factory=dict)
    method: Mapping[str, Any] = field(default_factory=dict)
    interface: str | None = None


def oscillator_params(parameters: Mapping[str, Any]):
    """Return Table I's example ``parameters['example']``, other fields replaced."""
    options = dict(parameters)
    example = {1: EXAMPLE_1, 2: EXAMPLE_2}.get(int(options.pop("example", 1)))
    if example is None:
        raise FmibridgeError(
            f"forced_oscillator: `example` must be 1 or 2, got "
            f"{parameters['example']!r}."
        )
    return dataclasses.replace(example, **options)


MODELS: dict[str, Callable[[Mapping[str, Any]], HybridSystem]] = {
    "bouncing_ball": lambda parameters: bouncing_ball(**parameters),
    "forced_oscillator": lambda parameters: forced_oscillator(
        oscillator_params(parameters)
    ),
}
# s; the oscillator's default is its Table I t_max
DEFAULT_T_END = {"bouncing_ball": 3.0}


def build_method(settings: Mapping[str, Any]):
    """Build the method named in `settings` (default Halving), maybe with Completion."""
    options = dict(settings)
    name = options.pop("name", "halving")
    zeno = options.pop("zeno", None)
    method = method_named(name, options)
    if zeno is None:
        return method
    if zeno != "complete":
        raise FmibridgeError(f"method `zeno` must be 'complete', got {zeno!r}.")
    return Completion(method)


def build(run: Run):
    """Return (system, method, t_end) for `run`, its span checked against the
    method's step; an FMU is loaded here, in the worker."""
    model = run.model
    if model.endswith(".toml"):
        from ..formats.adapters import load_adapter

        settings = dict(run.method)
        name, zeno = settings.pop("name", None), settings.pop("zeno", None)
        adapter = load_adapter(
            model,
            method=name,
            method_options=settings or None,
            t_end=run.t_end,
            interface=run.interface,
            zeno=zeno,
            parameters=run.parameters,
            start=run.start,
        )
        return adapter.system, adapter.method, adapter.t_end
    method = build_method(run.method)
    t_end = run.t_end
    if model in MODELS:
        system = MODELS[model](run.parameters)
        system = system.with_initial(run.start) if run.start else system
        if t_end is None:
            t_end = DEFAULT_T_END.get(model) or oscillator_params(run.parameters).t_max
    elif model.endswith(".fmu"):
        from ..flows.fmu import fmu_system

        if t_end is None:
            raise FmibridgeError(f"{model}: an FMU sweep needs `t_end`.")
        system = fmu_system(
            model, run.interface, parameters=dict(run.parameters), start=dict(run.start)
        )
    else:
        raise FmibridgeError(
            f"`model` must be one of {sorted(MODELS)}, an FMU (.fmu) or "
            f"an adapter file (.toml), got {model!r}."
        )
    try:
        t_end = check_span(system.t0, t_end)
        if not method.is_adaptive:  # adaptive steps: h is the first, not their size
            check_step(method.h, system.t0, t_end, method.max_steps, "method.h")
    except FmibridgeError:
        system.close()
        raise
    return system, method, t_end
