/* The equations of the stiff drive against a stop (see DcMotorStop/DcMotorStop.mo),
 * shared by DcMotorStop (the stop left to the master) and DcMotorStopEvents (the
 * stop inside the FMU, its `when` in DcMotorStopEvents.c): each includes this
 * once, after model.h, with its own model_table.h. */
#ifndef DC_MOTOR_STOP_H
#define DC_MOTOR_STOP_H

#include <math.h>

#include "model.h"

#define PI 3.14159265358979323846

static double voltage(const Model *m, double t)
{
    return m->p[P_V0] * sin(2.0 * PI * m->p[P_f] * t);
}

/* The mass of the rack with the rotor's inertia seen at the rack: m + J / r^2. */
static double moving_mass(const Model *m)
{
    return m->p[P_m] + m->p[P_J] / (m->p[P_r] * m->p[P_r]);
}

void model_derivatives(const Model *m, double t, const double *x, double *dx)
{
    const double force = m->p[P_k_m] * x[X_i] / m->p[P_r];  /* motor force on the rack */
    const double emf = m->p[P_k_m] * x[X_v] / m->p[P_r];    /* back-emf, omega = v / r */
    dx[X_x] = x[X_v];
    dx[X_v] = (force - m->p[P_k] * x[X_x] - m->p[P_d] * x[X_v]) / moving_mass(m);
    dx[X_i] = (voltage(m, t) - m->p[P_R] * x[X_i] - emf) / m->p[P_L];
}

void model_jacobian(const Model *m, double t, const double *x, double *J)
{
    const double mass = moving_mass(m), motor = m->p[P_k_m] / m->p[P_r];
    (void)t, (void)x;
    J[X_x * N_STATES + X_x] = 0.0;
    J[X_x * N_STATES + X_v] = 1.0;
    J[X_x * N_STATES + X_i] = 0.0;
    J[X_v * N_STATES + X_x] = -m->p[P_k] / mass;
    J[X_v * N_STATES + X_v] = -m->p[P_d] / mass;
    J[X_v * N_STATES + X_i] = motor / mass;
    J[X_i * N_STATES + X_x] = 0.0;
    J[X_i * N_STATES + X_v] = -motor / m->p[P_L];
    J[X_i * N_STATES + X_i] = -m->p[P_R] / m->p[P_L];
}

void model_outputs(const Model *m, double t, const double *x, double *y)
{
    y[Y_gap] = m->p[P_x_stop] - x[X_x];
    y[Y_gap_velocity] = -x[X_v];
    y[Y_V] = voltage(m, t);
    y[Y_F] = m->p[P_k_m] * x[X_i] / m->p[P_r];
}

#endif
