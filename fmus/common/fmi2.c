/* FMI 2.0 Model Exchange and Co-Simulation layer over the core (instance.h). */
#include <string.h>

#include "fmi2Functions.h"
#include "instance.h"

#define INST ((Instance *)c)
/* Returns fmi2Error from the calling function if the instance is NULL. */
#define REQUIRE_INSTANCE if (!c) return fmi2Error

static void emit(const Instance *inst, Status status, const char *category,
                 const char *message)
{
    fmi2CallbackLogger logger = (fmi2CallbackLogger)inst->host_logger;
    logger(inst->host_env, inst->name, (fmi2Status)status, category, "%s", message);
}

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid,
                              fmi2String resource_location,
                              const fmi2CallbackFunctions *callbacks, fmi2Boolean visible,
                              fmi2Boolean logging_on)
{
    Instance *inst;
    (void)resource_location, (void)visible;
    if (!callbacks || !callbacks->logger)
        return NULL;
    inst = instance_new(name, type == fmi2CoSimulation, emit);
    if (!inst)
        return NULL;
    inst->host_logger = (void (*)(void))callbacks->logger;
    inst->host_env = callbacks->componentEnvironment;
    inst->logging_on = logging_on;
    if (!guid || strcmp(guid, MODEL_TOKEN) != 0) {
        log_error(inst, "fmi2Instantiate: GUID %s does not match %s.", guid ? guid : "NULL",
                  MODEL_TOKEN);
        instance_free(inst);
        return NULL;
    }
    return inst;
}

void fmi2FreeInstance(fmi2Component c) { instance_free(INST); }

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean logging_on, size_t n,
                               const fmi2String categories[])
{
    REQUIRE_INSTANCE;
    (void)n, (void)categories;
    INST->logging_on = logging_on;
    return fmi2OK;
}

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tolerance_defined,
                               fmi2Real tolerance, fmi2Real start_time,
                               fmi2Boolean stop_time_defined, fmi2Real stop_time)
{
    REQUIRE_INSTANCE;
    (void)tolerance_defined, (void)tolerance, (void)stop_time_defined, (void)stop_time;
    return (fmi2Status)instance_setup(INST, start_time);
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c)
{
    REQUIRE_INSTANCE;
    return (fmi2Status)instance_enter_initialization(INST);
}

fmi2Status fmi2ExitInitializationMode(fmi2Component c)
{
    REQUIRE_INSTANCE;
    return (fmi2Status)instance_exit_initialization(INST);
}

fmi2Status fmi2Terminate(fmi2Component c)
{
    REQUIRE_INSTANCE;
    return (fmi2Status)instance_terminate(INST);
}

fmi2Status fmi2Reset(fmi2Component c)
{
    REQUIRE_INSTANCE;
#ifdef BARE_COSIMULATION /* built as tools often export: no reset */
    log_error(INST, "Reset: this FMU cannot be reset.");
    return fmi2Error;
#else
    instance_reset(INST);
    return fmi2OK;
#endif
}

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                       fmi2Real value[])
{
    REQUIRE_INSTANCE;
    return (fmi2Status)instance_get_real(INST, vr, n, value);
}

fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                          fmi2Integer value[])
{
    REQUIRE_INSTANCE;
    return (fmi2Status)instance_get_integer(INST, vr, n, value);
}

fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                          fmi2Boolean value[])
{
    REQUIRE_INSTANCE;
    (void)vr, (void)value;
    return (fmi2Status)instance_no_such_type(INST, "fmi2GetBoolean", n);
}

fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                         fmi2String value[])
{
    REQUIRE_INSTANCE;
    (void)vr, (void)value;
    return (fmi2Status)instance_no_such_type(INST, "fmi2GetString", n);
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                       const fmi2Real value[])
{
    REQUIRE_INSTANCE;
    return (fmi2Status)instance_set_real(INST, vr, n, value);
}

fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                          const fmi2Integer value[])
{
    REQUIRE_INSTANCE;
    return (fmi2Status)instance_set_integer(INST, vr, n, value);
}

fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                          const fmi2Boolean value[])
{
    REQUIRE_INSTANCE;
    (void)vr, (void)value;
    return (fmi2Status)instance_no_such_type(INST, "fmi2SetBoolean", n);
}

fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                         const fmi2String value[])
{
    REQUIRE_INSTANCE;
    (void)vr, (void)value;
    return (fmi2Status)instance_no_such_type(INST, "fmi2SetString", n);
}

fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *state)
{
    REQUIRE_INSTANCE;
#ifdef BARE_COSIMULATION /* canGetAndSetFMUstate is false */
    (void)state;
    log_error(INST, "GetFMUstate: this FMU cannot save its state.");
    return fmi2Error;
#else
    return (fmi2Status)instance_get_snapshot(INST, state);
#endif
}

fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate state)
{
    REQUIRE_INSTANCE;
    return (fmi2Status)instance_set_snapshot(INST, state);
}

fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *state)
{
    REQUIRE_INSTANCE;
    return (fmi2Status)instance_free_snapshot(INST, state);
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate state, size_t *size)
{
    REQUIRE_INSTANCE;
    (void)state;
    if (!size)
        return fmi2Error;
    *size = instance_serialized_size();
    return fmi2OK;
}

fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate state, fmi2Byte bytes[],
                                 size_t size)
{
    REQUIRE_INSTANCE;
    return (fmi2Status)instance_serialize(INST, state, bytes, size);
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte bytes[], size_t size,
                                   fmi2FMUstate *state)
{
    REQUIRE_INSTANCE;
    return (fmi2Status)instance_deserialize(INST, bytes, size, state);
}

fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference unknown[],
                                        size_t n_unknown, const fmi2ValueReference known[],
                                        size_t n_known, const fmi2Real seed[],
                                        fmi2Real sensitivity[])
{
    REQUIRE_INSTANCE;
    return (fmi2Status)instance_get_directional_derivative(
        INST, unknown, n_unknown, known, n_known, seed, sensitivity,
        "fmi2GetDirectionalDerivative");
}

/* ---- Model Exchange ---- */

fmi2Status fmi2EnterEventMode(fmi2Component c)
{
    REQUIRE_INSTANCE;
    return (fmi2Status)instance_enter_event_mode(INST);
}

fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *info)
{
    int states_changed = 0;
    Status status;
    REQUIRE_INSTANCE;
    if (!info) {
        log_error(INST, "fmi2NewDiscreteStates: eventInfo is NULL.");
        return fmi2Error;
    }
    status = instance_update_discrete(INST, &states_changed);
    info->newDiscreteStatesNeeded = fmi2False;
    info->terminateSimulation = fmi2False;
    info->nominalsOfContinuousStatesChanged = fmi2False;
    info->valuesOfContinuousStatesChanged = states_changed ? fmi2True : fmi2False;
    info->nextEventTimeDefined = fmi2False;
    info->nextEventTime = 0.0;
    return (fmi2Status)status;
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c)
{
    REQUIRE_INSTANCE;
    return (fmi2Status)instance_enter_continuous_mode(INST);
}

fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean no_set_prior,
                                       fmi2Boolean *enter_event_mode,
                                       fmi2Boolean *terminate_simulation)
{
    REQUIRE_INSTANCE;
    (void)no_set_prior;
    if (!instance_allows_me(INST, "fmi2CompletedIntegratorStep", PH_CONT))
        return fmi2Error;
    if (enter_event_mode)
        *enter_event_mode = fmi2False;
    if (terminate_simulation)
        *terminate_simulation = fmi2False;
    return fmi2OK;
}

fmi2Status fmi2SetTime(fmi2Component c, fmi2Real time)
{
    REQUIRE_INSTANCE;
    return (fmi2Status)instance_set_time(INST, time);
}

fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t n)
{
    REQUIRE_INSTANCE;
    return (fmi2Status)instance_set_states(INST, x, n);
}

fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real dx[], size_t n)
{
    REQUIRE_INSTANCE;
    return (fmi2Status)instance_get_derivatives(INST, dx, n);
}

fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real z[], size_t n)
{
    REQUIRE_INSTANCE;
    return (fmi2Status)instance_get_event_indicators(INST, z, n);
}

fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t n)
{
    REQUIRE_INSTANCE;
    return (fmi2Status)instance_get_states(INST, x, n);
}

fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x[], size_t n)
{
    REQUIRE_INSTANCE;
    return (fmi2Status)instance_get_nominals(INST, x, n);
}

/* ---- Co-Simulation ---- */

fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[],
                                       size_t n, const fmi2Integer order[],
                                       const fmi2Real value[])
{
    REQUIRE_INSTANCE;
    (void)vr, (void)order, (void)value;
    return (fmi2Status)instance_no_such_type(INST, "fmi2SetRealInputDerivatives", n);
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[],
                                        size_t n, const fmi2Integer order[],
                                        fmi2Real value[])
{
    REQUIRE_INSTANCE;
    (void)vr, (void)order, (void)value;
    return (fmi2Status)instance_no_such_type(INST, "fmi2GetRealOutputDerivatives", n);
}

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean no_set_prior)
{
    REQUIRE_INSTANCE;
    (void)no_set_prior;
    return (fmi2Status)instance_do_step(INST, t, h);
}

fmi2Status fmi2CancelStep(fmi2Component c)
{
    REQUIRE_INSTANCE;
    log_error(INST, "fmi2CancelStep: doStep is synchronous; nothing to cancel.");
    return fmi2Error;
}

/* Status queries: doStep never runs asynchronously, so there is nothing to report. */
static fmi2Status no_status(fmi2Component c, const char *function)
{
    REQUIRE_INSTANCE;
    log_error(INST, "%s: doStep is synchronous; no pending status.", function);
    return fmi2Discard;
}

fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *value)
{
    (void)s, (void)value;
    return no_status(c, "fmi2GetStatus");
}

fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *value)
{
    (void)s, (void)value;
    return no_status(c, "fmi2GetRealStatus");
}

fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *value)
{
    (void)s, (void)value;
    return no_status(c, "fmi2GetIntegerStatus");
}

fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *value)
{
    (void)s, (void)value;
    return no_status(c, "fmi2GetBooleanStatus");
}

fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *value)
{
    (void)s, (void)value;
    return no_status(c, "fmi2GetStringStatus");
}
