/* FMI 1.0 layer over the core (instance.h): Model Exchange, or Co-Simulation
 * when compiled with -DFMI1_COSIMULATION. FMI 1.0 names every function
 * <modelIdentifier>_fmiXxx; the builder passes -DMODEL_IDENTIFIER=<Model>.
 *
 * Its state machines map onto the core's phases: Model Exchange has no
 * explicit event or continuous-time mode, so fmiInitialize and fmiEventUpdate
 * pass through Event Mode and return to Continuous-Time Mode; fmiSetTime
 * before fmiInitialize sets the start time. Co-Simulation has no FMU state,
 * so a step cannot be repeated (canRejectSteps is false: newStep must be true). */
#include <stddef.h>
#include <string.h>

#include "fmi1Functions.h"
#include "instance.h"

#define FMI1_PASTE(a, b) a##_##b
#define FMI1_NAME(a, b) FMI1_PASTE(a, b)
/* The exported name of FMI 1.0 function `name`: <modelIdentifier>_<name>. */
#define FMI1(name) FMI1_NAME(MODEL_IDENTIFIER, name)

/* The FMI functions below are exported (the build hides everything else). */
#pragma GCC visibility push(default)

#define INST ((Instance *)c)
/* Returns fmi1Error from the calling function if the instance is NULL. */
#define REQUIRE_INSTANCE if (!c) return fmi1Error

static void emit(const Instance *inst, Status status, const char *category,
                 const char *message)
{
    fmi1CallbackLogger logger = (fmi1CallbackLogger)inst->host_logger;
    logger((fmi1Component)inst, inst->name, (fmi1Status)status, category, "%s", message);
}

/* A new instance, or NULL (logged) if the GUID is not this model's. */
static Instance *instantiate(const char *function, fmi1String name, fmi1String guid,
                             int is_cs, const fmi1CallbackFunctions *functions,
                             fmi1Boolean logging_on)
{
    Instance *inst;
    if (!functions->logger)
        return NULL;
    inst = instance_new(name, is_cs, emit);
    if (!inst)
        return NULL;
    inst->host_logger = (void (*)(void))functions->logger;
    inst->logging_on = logging_on;
    if (!guid || strcmp(guid, MODEL_TOKEN) != 0) {
        log_error(inst, "%s: GUID %s does not match %s.", function, guid ? guid : "NULL",
                  MODEL_TOKEN);
        instance_free(inst);
        return NULL;
    }
    return inst;
}

/* Initialization: the core's Initialization Mode, entered and left at once. */
static Status initialize(Instance *inst)
{
    Status status = instance_enter_initialization(inst);
    return status == ST_OK ? instance_exit_initialization(inst) : status;
}

const char *FMI1(fmiGetVersion)(void) { return "1.0"; }

fmi1Status FMI1(fmiSetDebugLogging)(fmi1Component c, fmi1Boolean logging_on)
{
    REQUIRE_INSTANCE;
    INST->logging_on = logging_on;
    return fmi1OK;
}

fmi1Status FMI1(fmiGetReal)(fmi1Component c, const fmi1ValueReference vr[], size_t n,
                            fmi1Real value[])
{
    REQUIRE_INSTANCE;
    return (fmi1Status)instance_get_real(INST, vr, n, value);
}

fmi1Status FMI1(fmiGetInteger)(fmi1Component c, const fmi1ValueReference vr[], size_t n,
                               fmi1Integer value[])
{
    REQUIRE_INSTANCE;
    return (fmi1Status)instance_get_integer(INST, vr, n, value);
}

fmi1Status FMI1(fmiGetBoolean)(fmi1Component c, const fmi1ValueReference vr[], size_t n,
                               fmi1Boolean value[])
{
    REQUIRE_INSTANCE;
    (void)vr, (void)value;
    return (fmi1Status)instance_no_such_type(INST, "fmiGetBoolean", n);
}

fmi1Status FMI1(fmiGetString)(fmi1Component c, const fmi1ValueReference vr[], size_t n,
                              fmi1String value[])
{
    REQUIRE_INSTANCE;
    (void)vr, (void)value;
    return (fmi1Status)instance_no_such_type(INST, "fmiGetString", n);
}

fmi1Status FMI1(fmiSetReal)(fmi1Component c, const fmi1ValueReference vr[], size_t n,
                            const fmi1Real value[])
{
    REQUIRE_INSTANCE;
    return (fmi1Status)instance_set_real(INST, vr, n, value);
}

fmi1Status FMI1(fmiSetInteger)(fmi1Component c, const fmi1ValueReference vr[], size_t n,
                               const fmi1Integer value[])
{
    Status status;
    REQUIRE_INSTANCE;
    if (INST->phase != PH_CONT)
        return (fmi1Status)instance_set_integer(INST, vr, n, value);
    /* FMI 1.0 Model Exchange sets discrete inputs between events (it has no
     * Event Mode); the fmiEventUpdate that must follow takes them. */
    INST->phase = PH_EVENT;
    status = instance_set_integer(INST, vr, n, value);
    INST->phase = PH_CONT;
    return (fmi1Status)status;
}

fmi1Status FMI1(fmiSetBoolean)(fmi1Component c, const fmi1ValueReference vr[], size_t n,
                               const fmi1Boolean value[])
{
    REQUIRE_INSTANCE;
    (void)vr, (void)value;
    return (fmi1Status)instance_no_such_type(INST, "fmiSetBoolean", n);
}

fmi1Status FMI1(fmiSetString)(fmi1Component c, const fmi1ValueReference vr[], size_t n,
                              const fmi1String value[])
{
    REQUIRE_INSTANCE;
    (void)vr, (void)value;
    return (fmi1Status)instance_no_such_type(INST, "fmiSetString", n);
}

#ifndef FMI1_COSIMULATION
/* ---- Model Exchange ---- */

static void event_info(fmi1EventInfo *info, int states_changed)
{
    info->iterationConverged = fmi1True;
    info->stateValueReferencesChanged = fmi1False;
    info->stateValuesChanged = states_changed ? fmi1True : fmi1False;
    info->terminateSimulation = fmi1False;
    info->upcomingTimeEvent = fmi1False;
    info->nextEventTime = 0.0;
}

const char *FMI1(fmiGetModelTypesPlatform)(void) { return "standard32"; }

fmi1Component FMI1(fmiInstantiateModel)(fmi1String name, fmi1String guid,
                                        fmi1CallbackFunctions functions,
                                        fmi1Boolean logging_on)
{
    return instantiate("fmiInstantiateModel", name, guid, 0, &functions, logging_on);
}

void FMI1(fmiFreeModelInstance)(fmi1Component c) { instance_free(INST); }

fmi1Status FMI1(fmiSetTime)(fmi1Component c, fmi1Real time)
{
    REQUIRE_INSTANCE;
    if (!instance_allows_me(INST, "fmiSetTime", PH_INSTANTIATED | PH_EVENT | PH_CONT))
        return fmi1Error;
    if (INST->phase == PH_INSTANTIATED) /* before fmiInitialize: the start time */
        return (fmi1Status)instance_setup(INST, time);
    return (fmi1Status)instance_set_time(INST, time);
}

fmi1Status FMI1(fmiInitialize)(fmi1Component c, fmi1Boolean tolerance_controlled,
                               fmi1Real relative_tolerance, fmi1EventInfo *info)
{
    int states_changed = 0;
    Status status;
    REQUIRE_INSTANCE;
    (void)tolerance_controlled, (void)relative_tolerance;
    if (!info) {
        log_error(INST, "fmiInitialize: eventInfo is NULL.");
        return fmi1Error;
    }
    if (!instance_allows_me(INST, "fmiInitialize", PH_INSTANTIATED))
        return fmi1Error;
    status = initialize(INST);
    if (status == ST_OK)
        status = instance_update_discrete(INST, &states_changed);
    if (status == ST_OK)
        status = instance_enter_continuous_mode(INST);
    event_info(info, states_changed);
    return (fmi1Status)status;
}

fmi1Status FMI1(fmiEventUpdate)(fmi1Component c, fmi1Boolean intermediate_results,
                                fmi1EventInfo *info)
{
    int states_changed = 0;
    Status status;
    REQUIRE_INSTANCE;
    (void)intermediate_results;
    if (!info) {
        log_error(INST, "fmiEventUpdate: eventInfo is NULL.");
        return fmi1Error;
    }
    status = instance_enter_event_mode(INST);
    if (status == ST_OK)
        status = instance_update_discrete(INST, &states_changed);
    if (status == ST_OK)
        status = instance_enter_continuous_mode(INST);
    event_info(info, states_changed);
    return (fmi1Status)status;
}

fmi1Status FMI1(fmiCompletedIntegratorStep)(fmi1Component c, fmi1Boolean *call_event_update)
{
    REQUIRE_INSTANCE;
    if (!instance_allows_me(INST, "fmiCompletedIntegratorStep", PH_CONT))
        return fmi1Error;
    if (call_event_update)
        *call_event_update = fmi1False;
    return fmi1OK;
}

fmi1Status FMI1(fmiSetContinuousStates)(fmi1Component c, const fmi1Real x[], size_t n)
{
    REQUIRE_INSTANCE;
    return (fmi1Status)instance_set_states(INST, x, n);
}

fmi1Status FMI1(fmiGetDerivatives)(fmi1Component c, fmi1Real dx[], size_t n)
{
    REQUIRE_INSTANCE;
    return (fmi1Status)instance_get_derivatives(INST, dx, n);
}

fmi1Status FMI1(fmiGetEventIndicators)(fmi1Component c, fmi1Real z[], size_t n)
{
    REQUIRE_INSTANCE;
    return (fmi1Status)instance_get_event_indicators(INST, z, n);
}

fmi1Status FMI1(fmiGetContinuousStates)(fmi1Component c, fmi1Real x[], size_t n)
{
    REQUIRE_INSTANCE;
    return (fmi1Status)instance_get_states(INST, x, n);
}

fmi1Status FMI1(fmiGetNominalContinuousStates)(fmi1Component c, fmi1Real x[], size_t n)
{
    REQUIRE_INSTANCE;
    return (fmi1Status)instance_get_nominals(INST, x, n);
}

fmi1Status FMI1(fmiGetStateValueReferences)(fmi1Component c, fmi1ValueReference vr[],
                                            size_t n)
{
    REQUIRE_INSTANCE;
    return (fmi1Status)instance_get_state_references(INST, vr, n);
}

fmi1Status FMI1(fmiTerminate)(fmi1Component c)
{
    REQUIRE_INSTANCE;
    if (!instance_allows_me(INST, "fmiTerminate", PH_EVENT | PH_CONT))
        return fmi1Error;
    return (fmi1Status)instance_terminate(INST);
}

#else
/* ---- Co-Simulation ---- */

const char *FMI1(fmiGetTypesPlatform)(void) { return "standard32"; }

fmi1Component FMI1(fmiInstantiateSlave)(fmi1String name, fmi1String guid,
                                        fmi1String location, fmi1String mime_type,
                                        fmi1Real timeout, fmi1Boolean visible,
                                        fmi1Boolean interactive,
                                        fmi1CallbackFunctions functions,
                                        fmi1Boolean logging_on)
{
    (void)location, (void)mime_type, (void)timeout, (void)visible, (void)interactive;
    return instantiate("fmiInstantiateSlave", name, guid, 1, &functions, logging_on);
}

void FMI1(fmiFreeSlaveInstance)(fmi1Component c) { instance_free(INST); }

fmi1Status FMI1(fmiInitializeSlave)(fmi1Component c, fmi1Real t_start,
                                    fmi1Boolean stop_time_defined, fmi1Real t_stop)
{
    Status status;
    REQUIRE_INSTANCE;
    (void)stop_time_defined, (void)t_stop;
    status = instance_setup(INST, t_start);
    return (fmi1Status)(status == ST_OK ? initialize(INST) : status);
}

fmi1Status FMI1(fmiTerminateSlave)(fmi1Component c)
{
    REQUIRE_INSTANCE;
    return (fmi1Status)instance_terminate(INST);
}

fmi1Status FMI1(fmiResetSlave)(fmi1Component c)
{
    REQUIRE_INSTANCE;
    instance_reset(INST);
    return fmi1OK;
}

fmi1Status FMI1(fmiSetRealInputDerivatives)(fmi1Component c, const fmi1ValueReference vr[],
                                            size_t n, const fmi1Integer order[],
                                            const fmi1Real value[])
{
    REQUIRE_INSTANCE;
    (void)vr, (void)order, (void)value;
    return (fmi1Status)instance_no_such_type(INST, "fmiSetRealInputDerivatives", n);
}

fmi1Status FMI1(fmiGetRealOutputDerivatives)(fmi1Component c, const fmi1ValueReference vr[],
                                             size_t n, const fmi1Integer order[],
                                             fmi1Real value[])
{
    REQUIRE_INSTANCE;
    (void)vr, (void)order, (void)value;
    return (fmi1Status)instance_no_such_type(INST, "fmiGetRealOutputDerivatives", n);
}

fmi1Status FMI1(fmiDoStep)(fmi1Component c, fmi1Real t, fmi1Real h, fmi1Boolean new_step)
{
    REQUIRE_INSTANCE;
    if (!new_step) {
        log_error(INST, "fmiDoStep: newStep is false, but this FMU cannot repeat a step "
                  "(canRejectSteps is false).");
        return fmi1Error;
    }
    return (fmi1Status)instance_do_step(INST, t, h);
}

fmi1Status FMI1(fmiCancelStep)(fmi1Component c)
{
    REQUIRE_INSTANCE;
    log_error(INST, "fmiCancelStep: doStep is synchronous; nothing to cancel.");
    return fmi1Error;
}

/* Status queries: doStep never runs asynchronously, so there is nothing to report. */
static fmi1Status no_status(fmi1Component c, const char *function)
{
    REQUIRE_INSTANCE;
    log_error(INST, "%s: doStep is synchronous; no pending status.", function);
    return fmi1Discard;
}

fmi1Status FMI1(fmiGetStatus)(fmi1Component c, const fmi1StatusKind s, fmi1Status *value)
{
    (void)s, (void)value;
    return no_status(c, "fmiGetStatus");
}

fmi1Status FMI1(fmiGetRealStatus)(fmi1Component c, const fmi1StatusKind s, fmi1Real *value)
{
    (void)s, (void)value;
    return no_status(c, "fmiGetRealStatus");
}

fmi1Status FMI1(fmiGetIntegerStatus)(fmi1Component c, const fmi1StatusKind s,
                                     fmi1Integer *value)
{
    (void)s, (void)value;
    return no_status(c, "fmiGetIntegerStatus");
}

fmi1Status FMI1(fmiGetBooleanStatus)(fmi1Component c, const fmi1StatusKind s,
                                     fmi1Boolean *value)
{
    (void)s, (void)value;
    return no_status(c, "fmiGetBooleanStatus");
}

fmi1Status FMI1(fmiGetStringStatus)(fmi1Component c, const fmi1StatusKind s,
                                    fmi1String *value)
{
    (void)s, (void)value;
    return no_status(c, "fmiGetStringStatus");
}
#endif

#pragma GCC visibility pop
