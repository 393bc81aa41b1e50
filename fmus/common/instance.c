/* Instance lifecycle, logging, phases and variable access by value reference. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instance.h"
#include "core.h"

static const VarInfo VARIABLES[] = MODEL_VARIABLES;
static const size_t N_VARIABLES = sizeof VARIABLES / sizeof VARIABLES[0];

static const double START_X[] = START_STATES;
static const double START_P[] = START_REAL_PARAMS;
static const double START_U[] = START_REAL_INPUTS;
static const int START_I[] = START_INTEGERS;
static const double START_D[] = START_DISCRETES;

/* Phases in which a variable of each kind may be set (see fmus/README.md). A state
 * takes a start value; after initialization only fmiSetContinuousStates sets it. */
#define SET_FIXED (PH_INSTANTIATED | PH_INIT)
#define SET_STATE (PH_INSTANTIATED | PH_INIT)
#define SET_REAL_INPUT (PH_INSTANTIATED | PH_INIT | PH_EVENT | PH_CONT | PH_STEP)
#define SET_DISCRETE_INPUT (PH_INSTANTIATED | PH_INIT | PH_EVENT | PH_STEP)
/* Phases in which values may be read: not before Initialization Mode. */
#define GET_PHASES (PH_INIT | PH_EVENT | PH_CONT | PH_STEP | PH_TERMINATED)

static const char *phase_name(Phase phase)
{
    switch (phase) {
    case PH_INSTANTIATED: return "Instantiated";
    case PH_INIT: return "InitializationMode";
    case PH_EVENT: return "EventMode";
    case PH_CONT: return "ContinuousTimeMode";
    case PH_STEP: return "StepMode";
    default: return "Terminated";
    }
}

static void log_message(const Instance *inst, Status status, const char *category,
                        const char *format, va_list args)
{
    char message[512];
    if (!inst->emit || !inst->host_logger)
        return;
    vsnprintf(message, sizeof message, format, args);
    inst->emit(inst, status, category, message);
}

void log_error(const Instance *inst, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    log_message(inst, ST_ERROR, "logStatusError", format, args);
    va_end(args);
}

void log_info(const Instance *inst, const char *format, ...)
{
    va_list args;
    if (!inst->logging_on)
        return;
    va_start(args, format);
    log_message(inst, ST_OK, "logEvents", format, args);
    va_end(args);
}

int instance_allows(const Instance *inst, const char *function, unsigned phases)
{
    if (inst->phase & phases)
        return 1;
    log_error(inst, "%s is not allowed in phase %s.", function, phase_name(inst->phase));
    return 0;
}

int instance_allows_me(const Instance *inst, const char *function, unsigned phases)
{
    if (inst->is_cs) {
        log_error(inst, "%s is a Model Exchange function; this instance is "
                  "Co-Simulation.", function);
        return 0;
    }
    return instance_allows(inst, function, phases);
}

int instance_checks_array(const Instance *inst, const char *function, const void *array,
                          size_t n, size_t expected)
{
    if (n != expected) {
        log_error(inst, "%s: expected %zu values, got %zu.", function, expected, n);
        return 0;
    }
    if (n > 0 && !array) {
        log_error(inst, "%s: the value array is NULL.", function);
        return 0;
    }
    return 1;
}

void instance_reset(Instance *inst)
{
    memset(&inst->s, 0, sizeof inst->s);
    memcpy(inst->s.x, START_X, sizeof START_X);
    memcpy(inst->s.m.p, START_P, sizeof START_P);
    memcpy(inst->s.m.u, START_U, sizeof START_U);
    memcpy(inst->s.m.i, START_I, sizeof START_I);
    memcpy(inst->s.m.d, START_D, sizeof START_D);
    inst->phase = PH_INSTANTIATED;
}

Instance *instance_new(const char *name, int is_cs, Emit *emit)
{
    Instance *inst = calloc(1, sizeof *inst);
    if (!inst)
        return NULL;
    inst->name = malloc(strlen(name ? name : "") + 1);
    if (!inst->name) {
        free(inst);
        return NULL;
    }
    strcpy(inst->name, name ? name : "");
    inst->is_cs = is_cs;
    inst->emit = emit;
    instance_reset(inst);
    return inst;
}

void instance_free(Instance *inst)
{
    if (!inst)
        return;
    free(inst->name);
    free(inst);
}

static const VarInfo *find_variable(const Instance *inst, unsigned vr, const char *function)
{
    size_t k;
    for (k = 0; k < N_VARIABLES; k++)
        if (VARIABLES[k].vr == vr)
            return &VARIABLES[k];
    log_error(inst, "%s: unknown value reference %u.", function, vr);
    return NULL;
}

double core_real_value(const Model *m, double t, const double *x, VarKind kind, int index)
{
    double values[N_STATES_ALLOC > N_OUTPUTS_ALLOC ? N_STATES_ALLOC : N_OUTPUTS_ALLOC];
    switch (kind) {
    case VK_TIME: return t;
    case VK_STATE: return x[index];
    case VK_PARAM: return m->p[index];
    case VK_INPUT: return m->u[index];
    case VK_DISCRETE: return m->d[index];
    case VK_DERIVATIVE:
        model_derivatives(m, t, x, values);
        return values[index];
#if N_OUTPUTS > 0
    case VK_OUTPUT:
        model_outputs(m, t, x, values);
        return values[index];
#endif
    default: return NAN;
    }
}

Status instance_get_state_references(Instance *inst, unsigned *vr, size_t n)
{
    size_t k;
    if (!instance_checks_array(inst, "GetStateValueReferences", vr, n, N_STATES))
        return ST_ERROR;
    for (k = 0; k < N_VARIABLES; k++)
        if (VARIABLES[k].kind == VK_STATE)
            vr[VARIABLES[k].index] = VARIABLES[k].vr;
    return ST_OK;
}

static int is_real(VarKind kind)
{
    return kind != VK_INT_PARAM && kind != VK_INT_INPUT;
}

Status instance_get_real(Instance *inst, const unsigned *vr, size_t n, double *value)
{
    size_t k;
    if (!instance_allows(inst, "GetReal", GET_PHASES))
        return ST_ERROR;
    if (n > 0 && (!vr || !value)) {
        log_error(inst, "GetReal: NULL array for %zu values.", n);
        return ST_ERROR;
    }
    for (k = 0; k < n; k++) {
        const VarInfo *var = find_variable(inst, vr[k], "GetReal");
        if (!var)
            return ST_ERROR;
        if (!is_real(var->kind)) {
            log_error(inst, "GetReal: variable `%s` is not Real.", var->name);
            return ST_ERROR;
        }
        value[k] = core_real_value(&inst->s.m, inst->s.t, inst->s.x, var->kind, var->index);
    }
    return ST_OK;
}

static unsigned settable_phases(VarKind kind)
{
    switch (kind) {
    case VK_STATE: return SET_STATE;
    case VK_PARAM: case VK_INT_PARAM: case VK_DISCRETE: return SET_FIXED;
    case VK_INPUT: return SET_REAL_INPUT;
    case VK_INT_INPUT: return SET_DISCRETE_INPUT;
    default: return 0;
    }
}

/* Returns the variable if it may be set now and has the right type, else NULL. */
static const VarInfo *settable_variable(Instance *inst, unsigned vr, int want_real,
                                        const char *function)
{
    const VarInfo *var = find_variable(inst, vr, function);
    if (!var)
        return NULL;
    if (is_real(var->kind) != want_real) {
        log_error(inst, "%s: variable `%s` has another type.", function, var->name);
        return NULL;
    }
    if (!(inst->phase & settable_phases(var->kind))) {
        log_error(inst, "%s: variable `%s` cannot be set in phase %s.", function,
                  var->name, phase_name(inst->phase));
        return NULL;
    }
    return var;
}

Status instance_set_real(Instance *inst, const unsigned *vr, size_t n, const double *value)
{
    size_t k;
    if (n > 0 && (!vr || !value)) {
        log_error(inst, "SetReal: NULL array for %zu values.", n);
        return ST_ERROR;
    }
    for (k = 0; k < n; k++) {
        const VarInfo *var = settable_variable(inst, vr[k], 1, "SetReal");
        if (!var)
            return ST_ERROR;
        if (var->kind == VK_STATE) {
            inst->s.x[var->index] = value[k];
            core_rearm_when(inst);
        } else if (var->kind == VK_PARAM) {
            inst->s.m.p[var->index] = value[k];
        } else if (var->kind == VK_DISCRETE) {
            inst->s.m.d[var->index] = value[k];
        } else {
            inst->s.m.u[var->index] = value[k];
        }
    }
    return ST_OK;
}

Status instance_get_integer(Instance *inst, const unsigned *vr, size_t n, int *value)
{
    size_t k;
    if (!instance_allows(inst, "GetInteger", GET_PHASES))
        return ST_ERROR;
    if (n > 0 && (!vr || !value)) {
        log_error(inst, "GetInteger: NULL array for %zu values.", n);
        return ST_ERROR;
    }
    for (k = 0; k < n; k++) {
        const VarInfo *var = find_variable(inst, vr[k], "GetInteger");
        if (!var)
            return ST_ERROR;
        if (is_real(var->kind)) {
            log_error(inst, "GetInteger: variable `%s` is Real.", var->name);
            return ST_ERROR;
        }
        value[k] = inst->s.m.i[var->index];
    }
    return ST_OK;
}

Status instance_set_integer(Instance *inst, const unsigned *vr, size_t n, const int *value)
{
    size_t k;
    if (n > 0 && (!vr || !value)) {
        log_error(inst, "SetInteger: NULL array for %zu values.", n);
        return ST_ERROR;
    }
    for (k = 0; k < n; k++) {
        const VarInfo *var = settable_variable(inst, vr[k], 0, "SetInteger");
        if (!var)
            return ST_ERROR;
        inst->s.m.i[var->index] = value[k];
    }
    return ST_OK;
}

Status instance_no_such_type(Instance *inst, const char *function, size_t n)
{
    if (n == 0)
        return ST_OK;
    log_error(inst, "%s: this model has no variables of this type.", function);
    return ST_ERROR;
}
