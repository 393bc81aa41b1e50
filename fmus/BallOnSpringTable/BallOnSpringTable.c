/* BallOnSpringTable: BouncingBall on SpringTable as one FMU (see BallOnSpringTable.mo). */
#include "model.h"

void model_derivatives(const Model *m, double t, const double *x, double *dx)
{
    (void)t;
    dx[X_h] = x[X_v];
    dx[X_x] = x[X_w];
    /* M qddot = -bias + dh^T lam with q = (h, x), dh = (1, -1) (Or and Ames, eq. 5) */
    dx[X_v] = -m->p[P_g] + m->u[U_lam] / m->p[P_m_ball];
    dx[X_w] = (-m->p[P_k] * x[X_x] - m->p[P_d] * x[X_w] - m->u[U_lam]) / m->p[P_m_table];
}

void model_outputs(const Model *m, double t, const double *x, double *y)
{
    (void)m;
    (void)t;
    y[Y_gap] = x[X_h] - x[X_x];
    y[Y_gap_velocity] = x[X_v] - x[X_w];
}
