/* BouncingBallEvents: flight plus the impact reset, done inside the FMU
 * (see BouncingBallEvents.mo). */
#include "model.h"

void model_derivatives(const Model *m, double t, const double *x, double *dx)
{
    (void)t;
    dx[X_h] = x[X_v];
    dx[X_v] = -m->p[P_g];
}

/* when h <= 0 then reinit(v, -e*pre(v)); end when;  (Newton's impact law) */
void model_when(Model *m, int k, double t, double *x)
{
    (void)k, (void)t;
    x[X_v] = -m->p[P_e] * x[X_v];
}
