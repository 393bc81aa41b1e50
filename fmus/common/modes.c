/* Phase transitions and Model Exchange evaluation. */
#include <math.h>
#include <string.h>

#include "core.h"

#if N_EVENT_INDICATORS > 0
static const VarRef EVENT_VARIABLES[] = EVENT_INDICATOR_VARIABLES;
#endif

void core_event_indicators(const Model *m, double t, const double *x, double *z)
{
#if N_EVENT_INDICATORS > 0
    int k;
    for (k = 0; k < N_EVENT_INDICATORS; k++)
        z[k] = core_real_value(m, t, x, EVENT_VARIABLES[k].kind, EVENT_VARIABLES[k].index);
#else
    (void)m, (void)t, (void)x, (void)z;
#endif
}

void core_rearm_when(Instance *inst)
{
    double z[N_EVENT_INDICATORS_ALLOC];
    int k;
    core_event_indicators(&inst->s.m, inst->s.t, inst->s.x, z);
    for (k = 0; k < N_EVENT_INDICATORS; k++)
        inst->s.pre[k] = inst->s.pre[k] && z[k] <= 0;
}

Status instance_setup(Instance *inst, double start_time)
{
    if (!instance_allows(inst, "SetupExperiment", PH_INSTANTIATED))
        return ST_ERROR;
    inst->s.t = start_time;
    return ST_OK;
}

Status instance_enter_initialization(Instance *inst)
{
    if (!instance_allows(inst, "EnterInitializationMode", PH_INSTANTIATED))
        return ST_ERROR;
    inst->phase = PH_INIT;
    return ST_OK;
}

Status instance_exit_initialization(Instance *inst)
{
    double z[N_EVENT_INDICATORS_ALLOC];
    int k;
    if (!instance_allows(inst, "ExitInitializationMode", PH_INIT))
        return ST_ERROR;
    if (inst->is_cs && !(inst->s.m.p[P_cs_substep] > 0)) {
        log_error(inst, "Parameter `cs_substep` must be > 0, got %g.",
                  inst->s.m.p[P_cs_substep]);
        return ST_ERROR;
    }
    /* A `when` does not fire at initialization: its condition starts as it is. */
    core_event_indicators(&inst->s.m, inst->s.t, inst->s.x, z);
    for (k = 0; k < N_EVENT_INDICATORS; k++)
        inst->s.pre[k] = z[k] <= 0;
    inst->phase = inst->is_cs ? PH_STEP : PH_EVENT;
    return ST_OK;
}

Status instance_enter_event_mode(Instance *inst)
{
    if (!instance_allows_me(inst, "EnterEventMode", PH_CONT))
        return ST_ERROR;
    inst->phase = PH_EVENT;
    return ST_OK;
}

Status instance_enter_continuous_mode(Instance *inst)
{
    if (!instance_allows_me(inst, "EnterContinuousTimeMode", PH_EVENT))
        return ST_ERROR;
    inst->phase = PH_CONT;
    return ST_OK;
}

Status instance_terminate(Instance *inst)
{
    if (!instance_allows(inst, "Terminate", PH_EVENT | PH_CONT | PH_STEP))
        return ST_ERROR;
    inst->phase = PH_TERMINATED;
    return ST_OK;
}

Status instance_set_time(Instance *inst, double t)
{
    if (!instance_allows_me(inst, "SetTime", PH_EVENT | PH_CONT))
        return ST_ERROR;
    inst->s.t = t;
    return ST_OK;
}

Status instance_set_states(Instance *inst, const double *x, size_t n)
{
    if (!instance_allows_me(inst, "SetContinuousStates", PH_CONT)
        || !instance_checks_array(inst, "SetContinuousStates", x, n, N_STATES))
        return ST_ERROR;
    memcpy(inst->s.x, x, n * sizeof *x);
    core_rearm_when(inst);
    return ST_OK;
}

/* Phases in which the Model Exchange evaluations may be called. */
#define EVALUATE (PH_INIT | PH_EVENT | PH_CONT | PH_TERMINATED)

Status instance_get_states(Instance *inst, double *x, size_t n)
{
    if (!instance_allows_me(inst, "GetContinuousStates", EVALUATE)
        || !instance_checks_array(inst, "GetContinuousStates", x, n, N_STATES))
        return ST_ERROR;
    memcpy(x, inst->s.x, n * sizeof *x);
    return ST_OK;
}

Status instance_get_nominals(Instance *inst, double *x, size_t n)
{
    size_t k;
    if (!instance_allows_me(inst, "GetNominalsOfContinuousStates", EVALUATE)
        || !instance_checks_array(inst, "GetNominalsOfContinuousStates", x, n,
                                  N_STATES))
        return ST_ERROR;
    for (k = 0; k < n; k++)
        x[k] = 1.0;
    return ST_OK;
}

Status instance_get_derivatives(Instance *inst, double *dx, size_t n)
{
    double values[N_STATES_ALLOC];
    if (!instance_allows_me(inst, "GetDerivatives", EVALUATE)
        || !instance_checks_array(inst, "GetDerivatives", dx, n, N_STATES))
        return ST_ERROR;
    model_derivatives(&inst->s.m, inst->s.t, inst->s.x, values);
    memcpy(dx, values, n * sizeof *dx);
    return ST_OK;
}

Status instance_get_event_indicators(Instance *inst, double *z, size_t n)
{
    double values[N_EVENT_INDICATORS_ALLOC];
    if (!instance_allows_me(inst, "GetEventIndicators", EVALUATE)
        || !instance_checks_array(inst, "GetEventIndicators", z, n, N_EVENT_INDICATORS))
        return ST_ERROR;
    core_event_indicators(&inst->s.m, inst->s.t, inst->s.x, values);
    memcpy(z, values, n * sizeof *z);
    return ST_OK;
}

int core_fire_when(Instance *inst)
{
    double z[N_EVENT_INDICATORS_ALLOC];
    int k, fired = 0;
    core_event_indicators(&inst->s.m, inst->s.t, inst->s.x, z);
    for (k = 0; k < N_EVENT_INDICATORS; k++) {
        int condition = z[k] <= 0;
        if (condition && !inst->s.pre[k]) {
#if N_EVENT_INDICATORS > 0
            model_when(&inst->s.m, k, inst->s.t, inst->s.x);
#endif
            log_info(inst, "when z[%d] <= 0 fired at t = %.17g", k, inst->s.t);
            fired = 1;
        }
        inst->s.pre[k] = condition;
    }
    return fired;
}

Status instance_update_discrete(Instance *inst, int *states_changed)
{
    if (!instance_allows_me(inst, "UpdateDiscreteStates", PH_EVENT))
        return ST_ERROR;
    *states_changed = core_fire_when(inst);
    return ST_OK;
}
