/* ControlledMassSpringStop: MassSpringStop and PositionController as one model
 * (see ControlledMassSpringStop.mo); the same arithmetic as the two coupled. */
#include <math.h>

#include "model.h"

static double reference(const Model *m, double t)
{
    return m->p[P_r0] + m->p[P_R] * sin(m->p[P_Omega] * t);
}

static double force(const Model *m, double t, const double *x)
{
    return m->p[P_Kp] * (reference(m, t) - x[X_x]) + m->p[P_Ki] * x[X_z]
           - m->p[P_Kd] * x[X_v];
}

static double acceleration(const Model *m, double t, const double *x)
{
    return (-m->p[P_k] * x[X_x] - m->p[P_d] * x[X_v] + force(m, t, x)) / m->p[P_m];
}

void model_derivatives(const Model *m, double t, const double *x, double *dx)
{
    dx[X_x] = x[X_v];
    dx[X_v] = acceleration(m, t, x);
    dx[X_z] = reference(m, t) - x[X_x];
}

void model_outputs(const Model *m, double t, const double *x, double *y)
{
    y[Y_F] = force(m, t, x);
    y[Y_a] = acceleration(m, t, x);
    y[Y_gap] = m->p[P_x_stop] - x[X_x];
    y[Y_r] = reference(m, t);
}
