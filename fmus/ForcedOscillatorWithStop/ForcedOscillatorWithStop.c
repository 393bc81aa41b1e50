/* ForcedOscillatorWithStop: Burden et al., Sec. V-B (see ForcedOscillatorWithStop.mo). */
#include <math.h>

#include "model.h"

static double forcing(const Model *m, double t)
{
    return m->i[I_use_input] ? m->u[U_u] : m->p[P_U] * cos(m->p[P_Omega] * t);
}

void model_derivatives(const Model *m, double t, const double *x, double *dx)
{
    double a = m->p[P_a], omega = m->p[P_omega];
    dx[X_x] = x[X_v];
    /* x'' + 2 a x' + omega^2 x = (u + dh^T lam)/m with dh = [-1]  (Burden et al., Sec. V-B) */
    dx[X_v] = -2.0 * a * x[X_v] - omega * omega * x[X_x]
              + (forcing(m, t) - m->u[U_lam]) / m->p[P_m];
}

void model_outputs(const Model *m, double t, const double *x, double *y)
{
    (void)t;
    y[Y_gap] = m->p[P_x_max] - x[X_x];
    y[Y_gap_velocity] = -x[X_v];
}
