/* Co-Simulation: fixed-substep RK4 with location of internal state events. */
#include <math.h>
#include <string.h>

#include "core.h"

/* Bound on `when` firings in one doStep; a Zeno execution hits it. */
#define MAX_EVENTS_PER_STEP 10000
/* Bisection halvings to locate a crossing inside a substep (2^-60 of it). */
#define MAX_BISECTIONS 60
/* Bound on substeps per doStep, so that a tiny `cs_substep` cannot hang the host. */
#define MAX_SUBSTEPS_PER_STEP 1e9
/* Relative tolerance for "the master's time equals ours". */
#define TIME_TOLERANCE 1e-9

/* Classic RK4 step of length h from (t, x); inputs are held over the step. */
static void rk4(const Model *m, double t, const double *x, double h, double *out)
{
    double k1[N_STATES_ALLOC], k2[N_STATES_ALLOC], k3[N_STATES_ALLOC], k4[N_STATES_ALLOC];
    double trial[N_STATES_ALLOC];
    int i;
    model_derivatives(m, t, x, k1);
    for (i = 0; i < N_STATES; i++) trial[i] = x[i] + 0.5 * h * k1[i];
    model_derivatives(m, t + 0.5 * h, trial, k2);
    for (i = 0; i < N_STATES; i++) trial[i] = x[i] + 0.5 * h * k2[i];
    model_derivatives(m, t + 0.5 * h, trial, k3);
    for (i = 0; i < N_STATES; i++) trial[i] = x[i] + h * k3[i];
    model_derivatives(m, t + h, trial, k4);
    for (i = 0; i < N_STATES; i++)
        out[i] = x[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
}

/* 1 if some armed `when z <= 0` condition holds at (t, x). */
static int when_triggers(const Instance *inst, double t, const double *x)
{
    double z[N_EVENT_INDICATORS_ALLOC];
    int k;
    core_event_indicators(&inst->s.m, t, x, z);
    for (k = 0; k < N_EVENT_INDICATORS; k++)
        if (z[k] <= 0 && !inst->s.pre[k])
            return 1;
    return 0;
}

/* Shortest RK4 step in (0, h] after which a `when` triggers (bisection). */
static double locate_event(const Instance *inst, double h)
{
    double low = 0.0, high = h, x[N_STATES_ALLOC];
    int n;
    for (n = 0; n < MAX_BISECTIONS && high - low > 0; n++) {
        double mid = 0.5 * (low + high);
        if (mid <= low || mid >= high)
            break;
        rk4(&inst->s.m, inst->s.t, inst->s.x, mid, x);
        if (when_triggers(inst, inst->s.t + mid, x))
            high = mid;
        else
            low = mid;
    }
    return high;
}

/* Advances by one substep of h ending at t_next, or up to the first event in it;
 * returns 1 if a `when` fired. */
static int substep(Instance *inst, double h, double t_next)
{
    double x[N_STATES_ALLOC];
    rk4(&inst->s.m, inst->s.t, inst->s.x, h, x);
    if (when_triggers(inst, t_next, x)) {
        double h_event = locate_event(inst, h);
        if (h_event < h) {
            rk4(&inst->s.m, inst->s.t, inst->s.x, h_event, x);
            t_next = inst->s.t + h_event;
        }
        memcpy(inst->s.x, x, sizeof x);
        inst->s.t = t_next;
        return core_fire_when(inst);
    }
    memcpy(inst->s.x, x, sizeof x);
    inst->s.t = t_next;
    core_rearm_when(inst);
    return 0;
}

static int time_matches(double a, double b)
{
    return fabs(a - b) <= TIME_TOLERANCE * (1.0 + fabs(a));
}

Status instance_do_step(Instance *inst, double t, double h)
{
    double t_end = t + h, step = inst->s.m.p[P_cs_substep];
    int n_events = 0;
    if (!instance_allows(inst, "DoStep", PH_STEP))
        return ST_ERROR;
    if (!(h >= 0) || !time_matches(t, inst->s.t)) {
        log_error(inst, "DoStep: needs h >= 0 from the FMU's time %.17g; got t = %.17g, h = %g.",
                  inst->s.t, t, h);
        return ST_ERROR;
    }
    if (h / step > MAX_SUBSTEPS_PER_STEP) {
        log_error(inst, "DoStep: h = %g needs more than %g substeps of cs_substep = %g.",
                  h, MAX_SUBSTEPS_PER_STEP, step);
        return ST_ERROR;
    }
    inst->s.t = t;
    while (inst->s.t < t_end) {
        double remaining = t_end - inst->s.t;
        int is_last = remaining <= step * (1.0 + TIME_TOLERANCE);
        n_events += substep(inst, is_last ? remaining : step,
                            is_last ? t_end : inst->s.t + step);
        if (n_events > MAX_EVENTS_PER_STEP) {
            log_error(inst, "DoStep: more than %d events between t = %.17g and %.17g "
                      "(Zeno?); stopped at t = %.17g.", MAX_EVENTS_PER_STEP, t, t_end,
                      inst->s.t);
            return ST_ERROR;
        }
    }
    return ST_OK;
}
