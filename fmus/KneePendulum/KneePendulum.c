/* KneePendulum: Or and Ames, Sec. 5.2, with the errata of specs/or-ames.md
 * (see KneePendulum.mo). */
#include <math.h>

#include "model.h"

void model_derivatives(const Model *m, double t, const double *x, double *dx)
{
    double m1 = m->p[P_m1], m2 = m->p[P_m2], L1 = m->p[P_L1], L2 = m->p[P_L2];
    double g = m->p[P_g], q1 = x[X_theta1], q2 = x[X_theta2];
    double w1 = x[X_omega1], w2 = x[X_omega2];
    /* Inertia matrix M(q) (Or and Ames, Example 2) */
    double M11 = m1 * L1 * L1 / 3 + m2 * (L1 * L1 + L2 * L2 / 3 + L1 * L2 * cos(q2));
    double M12 = m2 * (3 * L1 * L2 * cos(q2) + 2 * L2 * L2) / 6;
    double M22 = m2 * L2 * L2 / 3;
    /* Coriolis C(q, qdot) qdot and gravity N(q) = dV/dq */
    double b = 0.5 * m2 * L1 * L2 * sin(q2);
    double N2 = 0.5 * m2 * L2 * g * sin(q1 + q2);
    double N1 = (0.5 * m1 + m2) * L1 * g * sin(q1) + N2;
    /* M qddot = -C qdot - N + dh^T lam with dh = (0, 1)  (Or and Ames, eq. 5) */
    double r1 = b * (2 * w1 * w2 + w2 * w2) - N1;
    double r2 = -b * w1 * w1 - N2 + m->u[U_lam];
    double det = M11 * M22 - M12 * M12;
    (void)t;
    dx[X_theta1] = w1;
    dx[X_theta2] = w2;
    dx[X_omega1] = (M22 * r1 - M12 * r2) / det;
    dx[X_omega2] = (M11 * r2 - M12 * r1) / det;
}

void model_outputs(const Model *m, double t, const double *x, double *y)
{
    (void)m, (void)t;
    y[Y_gap] = x[X_theta2];
    y[Y_gap_velocity] = x[X_omega2];
}
