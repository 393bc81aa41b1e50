"""Completion's constrained phase by projection, compiled: the contact numerics of
a model without a force input.

`ProjectionFunctions` is `_contact.ContactFunctions` with one change: the
"constrained" vector field is the model's free one, f0 (the force map at
lam = 0), and its contact force is still lam = -hddot / (dh b_v) of eq. (6),
from the free normal acceleration and the direction b that the force map gives
(for a model without force input, `projection.ProjectedContact` builds b from
the effective mass: b_v = dh^T / mass). A constrained step
(`_contact.ProjectedStepper`, run by `_completion.Phase`) is then one free step
followed by R*, which sets h and dh qdot to zero through the states and keeps
the tangential motion: the constraint force acts only through the projection,
so the constrained motion is first order in the step (the force-input route,
eq. 7, is of the scheme's order). Lift-off comes, as on the force-input route,
where lam falls through zero: where the free normal acceleration points away
from the constraint.

References
----------
Or and Ames, "Formal and practical completion of Lagrangian hybrid systems",
eqs. (6)-(8), Sec. V (R*; "h = hdot = 0 can be enforced at every step").
"""

from libc.string cimport memcpy

from ._contact cimport ContactFunctions


cdef class ProjectionFunctions(ContactFunctions):
    """`ContactFunctions` whose constrained vector field is the free one (module
    docstring); the same parameters."""

    cdef double constrained_at(self, double t, const double* x, double* dx) except? -1:
        """The free dx/dt f0 to dx; return lam of eq. (6) (> 0 iff hddot < 0)."""
        cdef double lam = ContactFunctions.constrained_at(self, t, x, dx)
        memcpy(dx, &self.f0[0], self.n * sizeof(double))
        return lam
