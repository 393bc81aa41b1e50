/* SpringTable: a table on a spring, loaded through lam (see SpringTable.mo). */
#include "model.h"

void model_derivatives(const Model *m, double t, const double *x, double *dx)
{
    (void)t;
    dx[X_x] = x[X_v];
    /* m v' = -k x - d v + dh^T lam with dh = [-1] (Or and Ames, eq. 5) */
    dx[X_v] = (-m->p[P_k] * x[X_x] - m->p[P_d] * x[X_v] - m->u[U_lam]) / m->p[P_m];
}
