"""Guards relaxed into strips of width eps: the method of Burden et al., Fig. 12."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from ._relaxation import _Walk
from .base import MAX_HALVINGS, Method, at_least_one, positive


@dataclass(frozen=True)
class Relaxation(Method):
    """Relax every guard into a strip of width eps and wait on it (Fig. 12).

    Each attempt tries h, h/2, ... (Steps 4-5) until the trial lies in the
    relaxed domain D_j^eps (Def. 17); on a strip of depth tau it waits eps - tau
    (Steps 13-14), and the deepest strip's reset acts where the step met its
    guard (Step 15), the others listed as simultaneous (docs/guide/relaxation.md).

    Parameters
    ----------
    h : float
        Nominal step, s.
    eps : float
        Strip width: depth (the guard's units) and wait on the strip (s).
    integrator : {'midpoint', 'euler', 'rk4', 'dopri5'}
        Scheme A^h: 'midpoint' as in the paper, 'dopri5' with `rtol`.
    rtol, atol : float, optional
        Tolerance of adaptive steps, as `Halving`'s.
    error_warning : float
        Relative local error of a fixed step, or displacement of a strip's
        wait, above which the run warns.
    max_halvings : int
        Bound on halvings in one attempt (Step 5).
    max_steps, max_events : int
        Bounds on accepted steps and on transitions.

    References
    ----------
    Burden, Gonzalez, Vasudevan, Bajcsy, Sastry, "Metrization and simulation
    of controlled hybrid systems", Fig. 12; strips Def. 14, strip vector field
    Def. 17 (eq. 13), relaxed guards and resets Def. 18 (eq. 14); rate
    O(eps) + O(h^order), Cor. 28.

    Examples
    --------
    >>> from fmibridge.models import bouncing_ball
    >>> result = Relaxation(h=1e-2, eps=1e-6).run(bouncing_ball(), t_end=1.0)
    >>> round(result.events[0].t, 5)
    0.45152
    """

    name: ClassVar[str] = "relaxation"
    passes_zeno: ClassVar[bool] = True  # each transition waits on its strip
    # a state on a strip is reset after its wait, whatever its rate (Burden et al.)
    resets_on_approach: ClassVar[bool] = False
    default_integrator: ClassVar[str] = "midpoint"
    tolerates: ClassVar[bool] = True
    walk: ClassVar[type] = _Walk
    eps: float = 1e-6
    max_halvings: int = 64
    rtol: float | None = None
    atol: float | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        self._check_tolerance()
        positive("eps", self.eps)
        at_least_one("max_halvings", self.max_halvings, MAX_HALVINGS)

    @property
    def location_tolerance(self) -> float:
        """The strip width eps, s: a transition waits up to eps on its strip."""
        return self.eps

    def time_resolution(self, gap: float, rate: float) -> float:
        """A transition waits eps - tau on its strip after a step that ends up to
        eps deep (Fig. 12, Steps 13-14): up to (abs(gap) + eps) / abs(rate) + eps
        late."""
        return (abs(gap) + self.eps) / abs(rate) + self.eps if rate else math.inf
