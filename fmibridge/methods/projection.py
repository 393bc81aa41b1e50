"""Completion without a force input: the constrained phase by projection.

Where a model has no contact-force input but its gap is measured along a
state q (velocity qdot), each free step is followed by R* (h = 0, dh qdot = 0
through q and qdot); lam = -mass hddot / dh^2 (eq. 6 with dh M^-1 dh^T = dh^2 /
mass) decides the lift-off (Or and Ames, Sec. V: "h = hdot = 0 can be
enforced at every step"). First order in the step, unlike the force-input
route (`contact.fmu_contact`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np

from ..core.errors import FmibridgeError
from . import _contact
from .contact import (
    SLOPE_RTOL,
    Contact,
    GapOf,
    build_contact,
    flow_start,
    state_coordinate,
)

if TYPE_CHECKING:
    from ..flows.base import VectorField

__all__ = ["ProjectedContact", "projected_contact"]


@dataclass(frozen=True)
class ProjectedContact(Contact):
    """A contact whose constrained phase runs by projection (Or and Ames, eqs. 6,
    8, Sec. V): force map the free dx/dt plus lam dh^T / mass at qdot,
    constrained dx/dt the free one.

    Parameters
    ----------
    mass : float
        The effective mass along q: lam = -mass hddot / dh^2 (scale only).
    Other parameters
        Those of `Contact`.
    """

    mass: float = 1.0
    functions_kind = _contact.ProjectionFunctions

    def __post_init__(self) -> None:
        super().__post_init__()
        if not (math.isfinite(self.mass) and self.mass > 0):
            raise FmibridgeError(
                f"Contact `{self.gap}`: the effective `mass` must be a positive "
                f"number, got {self.mass!r}."
            )


def projected_contact(
    flow: VectorField,
    gap: str,
    velocity: str,
    restitution: float,
    *,
    coordinate: str,
    geometry: GapOf,
    mass: float = 1.0,
) -> ProjectedContact:
    """Return the ProjectedContact of a model without a force input.

    Parameters
    ----------
    flow : ModelExchangeFlow or VectorField
        The model; its derivatives give the free dx/dt.
    gap, velocity : str
        Names of h and dh qdot (labels).
    restitution : float
        Newton's coefficient e in [0, 1].
    coordinate : str
        The state the gap is measured along (q); its velocity is found.
    geometry : callable
        ((i,), (j,)) -> `contact.Gap` of q = x[i], qdot = x[j]: h(t, x), dh/dq
        (one value, not 0 at the start), its Hessian and, if given, the rate.
    mass : float, optional
        The effective mass m along q; it scales lam = -m hddot / dh^2 only.

    Returns
    -------
    ProjectedContact
        Checked at the start (`contact.build_contact`).
    """
    i, j = state_coordinate(flow, coordinate)
    shape, start = geometry(((i,), (j,))), flow_start(flow)
    slope = float(shape.gradient(start[0], start[1])[0])
    if not abs(slope) > SLOPE_RTOL:
        raise FmibridgeError(
            f"The gap {gap!r} does not move with the coordinate {coordinate!r} at "
            f"the start (dh/d{coordinate} = {slope!r}); name the state the gap is "
            f"measured along."
        )
    rhs, gradient = flow.rhs, shape.gradient

    def force_map(t: float, x: np.ndarray, lam: float) -> np.ndarray:
        dx = np.array(rhs(t, x), dtype=float)
        dx[j] += lam * float(gradient(t, x)[0]) / mass
        return dx

    args = ((gap, velocity), restitution, shape, ((i,), (j,)), force_map)
    contact = build_contact(*args, start=start, kind=ProjectedContact, mass=float(mass))
    return cast(ProjectedContact, contact)
