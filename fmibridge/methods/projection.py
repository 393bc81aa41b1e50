"""Completion without a force input: the constrained phase by projection.

An exported model rarely has an input through which a master could apply the
contact force of its stop. Completion (Or and Ames) can still slide on the
constraint if the model's gap is measured along one of its states, the
coordinate q (its velocity qdot is the state der(q) equals): after each step of
the model's own, free dynamics, R* sets h = 0 (Newton on q along dh) and
dh qdot = 0 through the states, and leaves every other state as the step left it
(the tangential motion, the states that ride along). The contact force is
estimated from the free normal acceleration and the effective mass along q,
lam = -mass hddot / dh^2 (eq. 6 with dh M^-1 dh^T = dh^2 / mass), and the body
lifts off where that acceleration points away from the constraint (lam falls
through zero). Within a step the constraint force is missing and only the
projection at its end restores the constraint, so the constrained motion is
first order in the step; the force-input route (`contact.fmu_contact`,
eq. 7) is of the scheme's order.

`ProjectedContact` is a `Contact` whose force map is the flow's free dx/dt plus
lam b, b_v = dh^T / mass at qdot (what a force input would do to a body of that
mass): the impact law (eq. 4), the acceleration of h (eq. 8) and lam (eq. 6)
follow as for any contact, while its compiled numerics
(`_contact.ProjectionFunctions`) step the free dx/dt.

References
----------
Or and Ames, "Formal and practical completion of Lagrangian hybrid systems",
eqs. (4)-(8), Sec. V (R*, and "h = hdot = 0 can be enforced at every step").
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np

from ..core.errors import FmibridgeError
from . import _contact
from .contact import Contact, Gap, build_contact, flow_start, state_coordinate

if TYPE_CHECKING:
    from ..flows.base import VectorField
    from ..flows.fmu import ModelExchangeFlow

__all__ = ["ProjectedContact", "by_projection", "projected_contact"]


@dataclass(frozen=True)
class ProjectedContact(Contact):
    """A contact whose constrained phase runs by projection (module docstring).

    Parameters
    ----------
    mass : float
        The effective mass along the coordinate q (kg, or the unit of a
        generalized force per acceleration of q): lam = -mass hddot / dh^2.
        It sets lam's scale only (`projected_contact`); 1: lam per unit mass.
    Other parameters
        Those of `Contact`; `rhs_with_force` is built by `projected_contact`.

    References
    ----------
    Or and Ames, eqs. (6), (8), Sec. V.
    """

    mass: float = 1.0
    # its constrained dx/dt is the free one
    functions_kind = _contact.ProjectionFunctions

    def __post_init__(self) -> None:
        super().__post_init__()
        if not (math.isfinite(self.mass) and self.mass > 0):
            raise FmibridgeError(
                f"Contact `{self.gap}`: the effective `mass` must be a positive "
                f"number, got {self.mass!r}."
            )


def projected_contact(
    flow: ModelExchangeFlow,
    gap: str,
    velocity: str,
    restitution: float,
    *,
    coordinate: str,
    mass: float = 1.0,
    gap_fn: Callable[[float, np.ndarray], float],
    gradient_fn: Callable[[float, np.ndarray], np.ndarray],
    hessian_fn: Callable[[float, np.ndarray], np.ndarray] | None = None,
) -> ProjectedContact:
    """Return the ProjectedContact of an FMU without a force input.

    Parameters
    ----------
    flow : ModelExchangeFlow
        The FMU; its derivatives give the free dx/dt.
    gap, velocity : str
        Names of h and dh qdot (labels).
    restitution : float
        Newton's coefficient e in [0, 1].
    coordinate : str
        The state the gap is measured along (q); its velocity is found
        (`state_coordinate`).
    mass : float, optional
        The effective mass m along q. It scales lam only: with one coordinate
        ``dh M^-1 dh^T = dh^2 / m``, so the impact law (eq. 4) is
        ``qdot -> -e qdot``, R* does not read M, hddot (eq. 8) comes from the
        free flow, the truncation bounds' eta is ``1 / |dh|``, and the
        constrained step is the free one then R*; ``lam = -m hddot / dh^2``
        (eq. 6) changes only in scale, and lift-off is where it changes sign.
        Without it (1) lam is a force per unit mass.
    gap_fn, gradient_fn, hessian_fn : callable
        h(t, x), dh/dq(t, x) (one value: q is the coordinate) and its Hessian
        (None: central differences of dh).

    Raises
    ------
    FmibridgeError
        A coordinate that is not a state or has no velocity state, and a gap
        that moves with another state or with time at the FMU's start
        (`build_contact`).

    References
    ----------
    Or and Ames, eqs. (4)-(8), Sec. V.
    """
    i, j = state_coordinate(flow, coordinate)
    geometry = Gap(gap_fn, gradient_fn, hessian_fn)
    return by_projection(
        flow,
        (gap, velocity),
        restitution,
        geometry,
        ((i,), (j,)),
        mass=mass,
        start=flow_start(flow),
    )


def by_projection(
    flow: VectorField,
    labels: tuple[str, str],
    restitution: float,
    geometry: Gap,
    coordinates: tuple[Sequence[int], Sequence[int]],
    *,
    mass: float = 1.0,
    start: tuple[float, np.ndarray, Sequence[str]] | None = None,
) -> ProjectedContact:
    """Return the ProjectedContact of one coordinate (q, qdot) = `coordinates`:
    the contact recipe (`contact.build_contact`, which checks at `start`) with
    the free dx/dt plus lam dh^T / mass at qdot as its force map."""
    rhs, gradient, (j,) = flow.rhs, geometry.gradient, coordinates[1]

    def force_map(t: float, x: np.ndarray, lam: float) -> np.ndarray:
        dx = np.array(rhs(t, x), dtype=float)
        dx[j] += lam * float(gradient(t, x)[0]) / mass
        return dx

    kind = functools.partial(ProjectedContact, mass=float(mass))
    contact = build_contact(
        labels, restitution, geometry, coordinates, force_map, start=start, kind=kind
    )
    return cast(ProjectedContact, contact)
