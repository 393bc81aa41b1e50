/* BouncingBallRest: the impact inside the FMU, with a rest rule
 * (see BouncingBallRest.mo). */
#include "model.h"

void model_derivatives(const Model *m, double t, const double *x, double *dx)
{
    (void)t;
    dx[X_h] = x[X_v];
    dx[X_v] = m->d[D_resting] != 0.0 ? 0.0 : -m->p[P_g];
}

/* when h <= 0 then
 *   resting = -e*pre(v) < v_min;
 *   reinit(v, if resting then 0 else -e*pre(v));
 * end when; */
void model_when(Model *m, int k, double t, double *x)
{
    double rebound = -m->p[P_e] * x[X_v];
    (void)k, (void)t;
    if (rebound < m->p[P_v_min]) {
        m->d[D_resting] = 1.0;
        x[X_v] = 0.0;
    } else {
        x[X_v] = rebound;
    }
}
