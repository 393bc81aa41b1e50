/* The equations of the linear motor drive against a stop (see DriveStop/DriveStop.mo),
 * shared by DriveStop (no force input) and DriveStopForced (the stop's force input
 * lam): each includes this once, after model.h, with its own model_table.h, and
 * defines stop_force, the stop's force on the slider along x. */
#ifndef DRIVE_STOP_H
#define DRIVE_STOP_H

#include <math.h>

#include "model.h"

#define PI 3.14159265358979323846

static double stop_force(const Model *m);

static double voltage(const Model *m, double t)
{
    return m->p[P_V0] * sin(2.0 * PI * m->p[P_f] * t);
}

void model_derivatives(const Model *m, double t, const double *x, double *dx)
{
    const double force = m->p[P_k_m] * x[X_i];  /* motor force on the slider */
    const double emf = m->p[P_k_m] * x[X_v];    /* back-emf */
    dx[X_x] = x[X_v];
    dx[X_v] = (force - m->p[P_d] * x[X_v] + stop_force(m)) / m->p[P_m];
    dx[X_i] = (voltage(m, t) - m->p[P_R] * x[X_i] - emf) / m->p[P_L];
}

void model_outputs(const Model *m, double t, const double *x, double *y)
{
    y[Y_gap] = m->p[P_x_stop] - x[X_x];
    y[Y_gap_velocity] = -x[X_v];
    y[Y_V] = voltage(m, t);
    y[Y_F] = m->p[P_k_m] * x[X_i];
}

#endif
