/* CradleBall: one ball of a Newton's cradle (see CradleBall.mo). */
#include <math.h>

#include "model.h"

void model_derivatives(const Model *m, double t, const double *x, double *dx)
{
    (void)t;
    dx[X_theta] = x[X_omega];
    dx[X_omega] = -m->p[P_g] / m->p[P_L] * sin(x[X_theta]);
}

void model_outputs(const Model *m, double t, const double *x, double *y)
{
    (void)t;
    y[Y_x] = m->p[P_L] * sin(x[X_theta]);
    y[Y_vx] = m->p[P_L] * cos(x[X_theta]) * x[X_omega];
}
