/* BouncingBall: continuous flight only (see BouncingBall.mo). */
#include "model.h"

void model_derivatives(const Model *m, double t, const double *x, double *dx)
{
    (void)t;
    dx[X_h] = x[X_v];
    /* m v' = -m g + dh^T lam with dh = [1] (Or and Ames, eq. 5) */
    dx[X_v] = -m->p[P_g] + m->u[U_lam] / m->p[P_m];
}
