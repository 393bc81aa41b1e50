/* DcMotorStopEvents: DcMotorStop with its stop inside (see DcMotorStopEvents.mo);
 * the equations are common/dc_motor_stop.h, shared with DcMotorStop. */
#include "dc_motor_stop.h"

/* when gap <= 0: an impact only where the mass moves into the stop (v > 0). A
 * master that locates the crossing on the far side leaves gap slightly below 0
 * after the reset; leaving, the gap rises through 0 and may be found at exactly
 * 0, where `gap <= 0` holds again: without the velocity's sign that fires a
 * second reinit, into the stop (measured with fmpy's CVode at rtol 1e-8: six
 * such events after the first impact, and the second impact 3 ms late). */
void model_when(Model *m, int k, double t, double *x)
{
    (void)k, (void)t;
    if (x[X_v] > 0.0)
        x[X_v] = -m->p[P_e] * x[X_v];  /* the current keeps its value: an inductor's */
}
