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
        The state the gap is measured along (q); its velocity is found.
    mass : float, optional
        The effective mass m along q; it scales lam = -m hddot / dh^2 only.
    gap_fn, gradient_fn, hessian_fn : callable
        h(t, x), dh/dq(t, x) (one value) and its Hessian (None: central
        differences of dh).

    Returns
    -------
    ProjectedContact
        Checked at the FMU's start (`contact.build_contact`).
    """
    i, j = state_coordinate(flow, coordinate)
    geometry = Gap(gap_fn, gradient_fn, hessian_fn)
    labels = (gap, velocity)
    return by_projection(
        flow,
        labels,
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
    """Return the ProjectedContact of one coordinate (q, qdot) = `coordinates`
    (`contact.build_contact`, checked at `start`)."""
    rhs, gradient, (j,) = flow.rhs, geometry.gradient, coordinates[1]

    def force_map(t: float, x: np.ndarray, lam: float) -> np.ndarray:
        dx = np.array(rhs(t, x), dtype=float)
        dx[j] += lam * float(gradient(t, x)[0]) / mass
        return dx

    args = (labels, restitution, geometry, coordinates, force_map)
    contact = build_contact(*args, start=start, kind=ProjectedContact, mass=float(mass))
    return cast(ProjectedContact, contact)
