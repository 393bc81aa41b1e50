/* The equations of the mass on a spring against a stop, the plant of the coupled
 * example (see MassSpringStop/MassSpringStop.mo), shared by MassSpringStop and
 * MassSpringStopSlowSave (the same model whose FMU state is slow to save): each
 * includes this once, after model.h, with its own model_table.h. */
#ifndef MASS_SPRING_STOP_H
#define MASS_SPRING_STOP_H

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

#endif
