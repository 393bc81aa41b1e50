"""A unilateral contact between components of a coupled Model Exchange system.

The gap may be any function of several components' variables (h = ball.h -
table.x). Each body's generalized force input takes scale * lam, its share
dh_k(q)^T lam of Or and Ames eq. (5); the force map is the whole coupled
system's, so impact, contact force and constrained dynamics (eqs. 4-8) act on
all at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ..core.errors import FmibridgeError
from ..flows.coupled import CoupledModelExchange
from .contact import Contact, Gap, build_contact

ScalarFn = Callable[[float, np.ndarray], float]


def coupled_contact(
    flow: CoupledModelExchange,
    gap: str | ScalarFn,
    velocity: str | ScalarFn,
    restitution: float,
    *,
    forces: Mapping[str, float] | Sequence[str],
    t0: float = 0.0,
) -> Contact:
    """Return the Contact of a unilateral constraint between coupled components.

    Parameters
    ----------
    flow : CoupledModelExchange
        The coupled system (`flows.coupled.couple` of Model Exchange FMUs or
        native parts).
    gap, velocity : str or callable
        h(q) and its rate dh(q) qdot (linear in qdot): a variable
        `component.variable` of the flow, or a function (t, x) -> float of
        its state (a `formats` expression such as ``ball.h - table.x``).
    restitution : float
        Newton's coefficient e in [0, 1].
    forces : mapping or sequence
        The force inputs, `component.input`, each with the value it takes per
        unit lam (a sequence: 1 each); each component named is a body, with
        states [q, qdot].
    t0 : float
        Where the contact is checked against the flow (with its x0).

    Returns
    -------
    Contact
        q, qdot and the force map of the whole coupled system, checked at t0
        (`contact.build_contact`) and for force inputs that are not 0 before
        the contact acts or pull a body into it.
    """
    if not isinstance(flow, CoupledModelExchange):
        raise FmibridgeError(
            f"coupled_contact: the flow must be a coupled Model Exchange system "
            f"(`couple` of Model Exchange FMUs or native parts), got "
            f"{type(flow).__name__}."
        )
    scales = (
        {str(k): float(v) for k, v in forces.items()}
        if isinstance(forces, Mapping)
        else dict.fromkeys(map(str, forces), 1.0)
    )
    if not scales:
        raise FmibridgeError("coupled_contact: `forces` names no force input.")
    t0, x0 = float(t0), np.array(flow.x0, dtype=float)
    free = flow.rhs(t0, x0)  # before any force input is written
    inputs, u = flow.with_inputs(list(scales)), np.array(list(scales.values()))
    coordinates = _coordinates(flow, scales)
    gap_fn, gap_name = _scalar(flow, gap, "gap", t0)
    rate_fn, rate_name = _scalar(flow, velocity, "gap_velocity", t0)
    contact = build_contact(
        (gap_name, rate_name),
        float(restitution),
        Gap.of_rate(gap_fn, rate_fn, coordinates[1]),
        coordinates,
        lambda t, x, lam: inputs(t, x, u * lam),
        start=(t0, x0, flow.state_names),
    )
    _check_forces(flow, contact, scales, t0, x0, free)
    return contact


def _coordinates(
    flow: CoupledModelExchange, scales: Mapping[str, float]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """q and qdot: the two halves of the states of each body, in flow order."""
    bodies = {name.partition(".")[0] for name in scales}
    q_index: list[int] = []
    v_index: list[int] = []
    for component, part in zip(flow.components, flow._slices, strict=True):
        n = len(component.state_names)
        half = part.start + n // 2
        if component.name in bodies:
            if n == 0 or n % 2:
                raise FmibridgeError(
                    f"coupled_contact: component {component.name!r} takes a "
                    f"contact force, so its states must be [q, qdot]; it has "
                    f"{list(component.state_names)}."
                )
            q_index += range(part.start, half)
            v_index += range(half, part.stop)
    return tuple(q_index), tuple(v_index)


def _scalar(
    flow: CoupledModelExchange, spec: str | ScalarFn, role: str, t0: float
) -> tuple[ScalarFn, str]:
    """A gap or velocity as (function of (t, x), its column name)."""
    if callable(spec):
        name = getattr(spec, "__name__", "<lambda>")
        return spec, role if name == "<lambda>" else name
    names = flow.state_names
    if spec in names:
        i = names.index(spec)
        return (lambda t, x: float(x[i])), spec
    known = flow.variables(t0, flow.x0)
    if spec not in known:
        raise FmibridgeError(
            f"coupled_contact: the {role} {spec!r} is no variable of the coupled "
            f"system; it has {sorted(known)}."
        )
    return (lambda t, x: float(flow.variables(t, x)[spec])), spec


def _check_forces(
    flow: CoupledModelExchange,
    contact: Contact,
    scales: Mapping[str, float],
    t: float,
    x: np.ndarray,
    free: np.ndarray,
) -> None:
    """Refuse force inputs not 0 before, or pushing a body in (dh_k M^-1 dh_k^T<=0)."""
    f0, b = contact.affine(t, x)
    if not np.allclose(f0, free, rtol=1e-12, atol=0.0):
        raise FmibridgeError(
            f"coupled_contact: the force inputs {sorted(scales)} are not 0 before "
            f"the contact acts (they change dx/dt at t = {t!r}); leave them free "
            f"at 0."
        )
    dh = dict(zip(contact.v_index, contact.dh(t, x).tolist(), strict=True))
    for component, part in zip(flow.components, flow._slices, strict=True):
        rows = [i for i in range(part.start, part.stop) if i in dh]
        if not any(dh[i] for i in rows):
            continue  # not a body, or the gap does not move with it here
        push = sum(dh[i] * b[i] for i in rows)  # dh_k M_k^-1 dh_k^T, eq. (6)
        if not push > 0.0:
            inputs = [k for k in scales if k.partition(".")[0] == component.name]
            raise FmibridgeError(
                f"coupled_contact: the force through {inputs} (scales "
                f"{[scales[k] for k in inputs]}) moves {component.name!r} into the "
                f"contact, not out of it (dh_k M^-1 dh_k^T lam = {push:.6g} lam at "
                f"t = {t!r}): flip the sign of its scale, or check that the input "
                f"is the body's generalized force along dh^T."
            )
