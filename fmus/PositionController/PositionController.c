/* PositionController: the controller of the coupled example (see PositionController.mo). */
#include <math.h>

#include "model.h"

static double reference(const Model *m, double t)
{
    return m->p[P_r0] + m->p[P_R] * sin(m->p[P_Omega] * t);
}

void model_derivatives(const Model *m, double t, const double *x, double *dx)
{
    (void)x;
    dx[X_z] = reference(m, t) - m->u[U_x_meas];
}

void model_outputs(const Model *m, double t, const double *x, double *y)
{
    double r = reference(m, t);
    y[Y_F] = m->p[P_Kp] * (r - m->u[U_x_meas]) + m->p[P_Ki] * x[X_z]
             - m->p[P_Kd] * m->u[U_v_meas] - m->p[P_Ka] * m->u[U_a_meas];
    y[Y_r] = r;
}
