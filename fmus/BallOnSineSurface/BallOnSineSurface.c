/* BallOnSineSurface: Or and Ames, Sec. 5.1 (see BallOnSineSurface.mo). */
#include <math.h>

#include "model.h"

void model_derivatives(const Model *m, double t, const double *x, double *dx)
{
    double lam_per_mass = m->u[U_lam] / m->p[P_m];
    (void)t;
    dx[X_x] = x[X_vx];
    dx[X_y] = x[X_vy];
    /* m qddot = -N + dh^T lam, N = (0, m g), dh = (-cos x, 1)  (Or and Ames, eq. 5) */
    dx[X_vx] = -cos(x[X_x]) * lam_per_mass;
    dx[X_vy] = -m->p[P_g] + lam_per_mass;
}

void model_outputs(const Model *m, double t, const double *x, double *y)
{
    (void)m, (void)t;
    y[Y_gap] = x[X_y] - sin(x[X_x]);
    y[Y_gap_velocity] = x[X_vy] - x[X_vx] * cos(x[X_x]);
}
