/* MassSpringStopSlowSave: MassSpringStop's equations; its FMU state costs
   state_save_cost (model.toml) to save (see MassSpringStopSlowSave.mo). */
#include "model.h"

static double acceleration(const Model *m, const double *x)
{
    /* m a = -k x - d v + F */
    return (-m->p[P_k] * x[X_x] - m->p[P_d] * x[X_v] + m->u[U_F]) / m->p[P_m];
}

void model_derivatives(const Model *m, double t, const double *x, double *dx)
{
    (void)t;
    dx[X_x] = x[X_v];
    dx[X_v] = acceleration(m, x);
}

void model_outputs(const Model *m, double t, const double *x, double *y)
{
    (void)t;
    y[Y_a] = acceleration(m, x);
    y[Y_gap] = m->p[P_x_stop] - x[X_x];
}
