/* FaultyBall: free flight, and the fault its parameter names (see FaultyBall.mo).
 * A test FMU: it crashes, exits or hangs on purpose once time > t_fault. */
#include <stdlib.h>

#include "model.h"

/* The external function of FaultyBall.mo: never returns for fault 1-4. */
static double fmibridge_fail(int fault)
{
    static int *volatile nowhere = NULL; /* volatile: a real write through NULL */
    volatile unsigned long spins = 0;

    switch (fault) {
    case 1:
        *nowhere = 1; /* segmentation fault (SIGSEGV) */
        break;
    case 2:
        abort(); /* SIGABRT */
    case 3:
        exit(0); /* ends the whole process, with code 0 */
    case 4:
        for (;;) /* hangs: never returns to the caller */
            spins++;
    default:
        break;
    }
    return 0.0;
}

void model_derivatives(const Model *m, double t, const double *x, double *dx)
{
    double fault = 0.0;

    if (m->i[I_fault] != 0 && t > m->p[P_t_fault])
        fault = fmibridge_fail(m->i[I_fault]);
    dx[X_h] = x[X_v];
    dx[X_v] = -m->p[P_g] + fault;
}

void model_outputs(const Model *m, double t, const double *x, double *y)
{
    (void)m, (void)t;
    y[Y_gap] = x[X_h];
}
