/* Pronk: Burden et al., Sec. V-C, sagittal-plane equations as derived in
 * specs/burden-relaxation.md Sec. 5.3 (see Pronk.mo). */
#include <math.h>

#include "model.h"

#define FRONT 1 /* bit of `contact`, and sign of the hip offset along the body */
#define REAR 2

static double hip_sign(int leg)
{
    return leg == FRONT ? 1.0 : -1.0;
}

/* Hip position: centre of mass +- d/2 along the body axis. */
static void hip(const Model *m, const double *x, int leg, double *hx, double *hz)
{
    double half = 0.5 * m->p[P_d] * hip_sign(leg);
    *hx = x[X_x] + half * cos(x[X_theta]);
    *hz = x[X_z] + half * sin(x[X_theta]);
}

static double foot_x(const Model *m, int leg)
{
    return leg == FRONT ? m->u[U_foot_front_x] : m->u[U_foot_rear_x];
}

/* Adds the spring force k (ell - L)(hip - foot)/L of a stance leg at its hip and
 * its moment about the centre of mass to (fx, fz, tau). */
static void add_leg(const Model *m, const double *x, int leg, double *f)
{
    double hx, hz, dx, dz, length, scale;
    hip(m, x, leg, &hx, &hz);
    dx = hx - foot_x(m, leg);
    dz = hz;
    length = sqrt(dx * dx + dz * dz);
    scale = m->p[P_k] * (m->p[P_ell] - length) / length;
    f[0] += scale * dx;
    f[1] += scale * dz;
    f[2] += (hx - x[X_x]) * scale * dz - (hz - x[X_z]) * scale * dx;
}

void model_derivatives(const Model *m, double t, const double *x, double *dx)
{
    double f[3] = {0.0, 0.0, 0.0}; /* force x, force z, moment */
    (void)t;
    if (m->i[I_contact] & FRONT)
        add_leg(m, x, FRONT, f);
    if (m->i[I_contact] & REAR)
        add_leg(m, x, REAR, f);
    dx[X_x] = x[X_vx];
    dx[X_z] = x[X_vz];
    dx[X_theta] = x[X_vtheta];
    dx[X_vx] = f[0] / m->p[P_m];
    dx[X_vz] = f[1] / m->p[P_m] - m->p[P_g];
    dx[X_vtheta] = f[2] / m->p[P_I];
}

/* Swing foot = hip + ell (sin(theta + psi), -cos(theta + psi)). */
static void swing_foot(const Model *m, const double *x, int leg, double *fx, double *fz)
{
    double hx, hz, angle = x[X_theta] + m->p[P_psi];
    hip(m, x, leg, &hx, &hz);
    *fx = hx + m->p[P_ell] * sin(angle);
    *fz = hz - m->p[P_ell] * cos(angle);
}

static double lift_off_gap(const Model *m, const double *x, int leg)
{
    double hx, hz, dx;
    hip(m, x, leg, &hx, &hz);
    dx = hx - foot_x(m, leg);
    return m->p[P_ell] - sqrt(dx * dx + hz * hz);
}

void model_outputs(const Model *m, double t, const double *x, double *y)
{
    (void)t;
    swing_foot(m, x, FRONT, &y[Y_swing_front_x], &y[Y_gap_td_front]);
    swing_foot(m, x, REAR, &y[Y_swing_rear_x], &y[Y_gap_td_rear]);
    y[Y_gap_lo_front] = lift_off_gap(m, x, FRONT);
    y[Y_gap_lo_rear] = lift_off_gap(m, x, REAR);
}
