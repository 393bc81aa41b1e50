/* FMI 3.0 Model Exchange and Co-Simulation layer over the core (instance.h). */
#include <string.h>

#include "fmi3Functions.h"
#include "instance.h"

#define INST ((Instance *)c)
/* Returns fmi3Error from the calling function if the instance is NULL. */
#define REQUIRE_INSTANCE if (!c) return fmi3Error

static void emit(const Instance *inst, Status status, const char *category,
                 const char *message)
{
    fmi3LogMessageCallback logger = (fmi3LogMessageCallback)inst->host_logger;
    logger(inst->host_env, (fmi3Status)status, category, message);
}

const char *fmi3GetVersion(void) { return fmi3Version; }

static Instance *instantiate(fmi3String name, fmi3String token, int is_cs,
                             fmi3Boolean logging_on, fmi3InstanceEnvironment env,
                             fmi3LogMessageCallback logger)
{
    Instance *inst;
    if (!logger)
        return NULL;
    inst = instance_new(name, is_cs, emit);
    if (!inst)
        return NULL;
    inst->host_logger = (void (*)(void))logger;
    inst->host_env = env;
    inst->logging_on = logging_on;
    if (!token || strcmp(token, MODEL_TOKEN) != 0) {
        log_error(inst, "fmi3Instantiate: instantiationToken %s does not match %s.",
                  token ? token : "NULL", MODEL_TOKEN);
        instance_free(inst);
        return NULL;
    }
    return inst;
}

fmi3Instance fmi3InstantiateModelExchange(fmi3String name, fmi3String token,
                                          fmi3String resource_path, fmi3Boolean visible,
                                          fmi3Boolean logging_on,
                                          fmi3InstanceEnvironment env,
                                          fmi3LogMessageCallback logger)
{
    (void)resource_path, (void)visible;
    return instantiate(name, token, 0, logging_on, env, logger);
}

fmi3Instance fmi3InstantiateCoSimulation(
    fmi3String name, fmi3String token, fmi3String resource_path, fmi3Boolean visible,
    fmi3Boolean logging_on, fmi3Boolean event_mode_used, fmi3Boolean early_return_allowed,
    const fmi3ValueReference required[], size_t n_required, fmi3InstanceEnvironment env,
    fmi3LogMessageCallback logger, fmi3IntermediateUpdateCallback intermediate_update)
{
    (void)resource_path, (void)visible, (void)early_return_allowed;
    (void)required, (void)n_required, (void)intermediate_update;
    if (event_mode_used) { /* the modelDescription does not declare hasEventMode */
        if (logger)
            logger(env, fmi3Error, "logStatusError",
                   "fmi3InstantiateCoSimulation: eventModeUsed, but this FMU has no "
                   "Event Mode (hasEventMode is false).");
        return NULL;
    }
    return instantiate(name, token, 1, logging_on, env, logger);
}

fmi3Instance fmi3InstantiateScheduledExecution(
    fmi3String name, fmi3String token, fmi3String resource_path, fmi3Boolean visible,
    fmi3Boolean logging_on, fmi3InstanceEnvironment env, fmi3LogMessageCallback logger,
    fmi3ClockUpdateCallback clock_update, fmi3LockPreemptionCallback lock,
    fmi3UnlockPreemptionCallback unlock)
{
    (void)name, (void)token, (void)resource_path, (void)visible, (void)logging_on;
    (void)clock_update, (void)lock, (void)unlock;
    if (logger)
        logger(env, fmi3Error, "logStatusError", "Scheduled Execution is not supported.");
    return NULL;
}

void fmi3FreeInstance(fmi3Instance c) { instance_free(INST); }

fmi3Status fmi3SetDebugLogging(fmi3Instance c, fmi3Boolean logging_on, size_t n,
                               const fmi3String categories[])
{
    REQUIRE_INSTANCE;
    (void)n, (void)categories;
    INST->logging_on = logging_on;
    return fmi3OK;
}

fmi3Status fmi3EnterInitializationMode(fmi3Instance c, fmi3Boolean tolerance_defined,
                                       fmi3Float64 tolerance, fmi3Float64 start_time,
                                       fmi3Boolean stop_time_defined, fmi3Float64 stop_time)
{
    Status status;
    REQUIRE_INSTANCE;
    (void)tolerance_defined, (void)tolerance, (void)stop_time_defined, (void)stop_time;
    status = instance_setup(INST, start_time);
    return (fmi3Status)(status == ST_OK ? instance_enter_initialization(INST) : status);
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance c)
{
    REQUIRE_INSTANCE;
    return (fmi3Status)instance_exit_initialization(INST);
}

fmi3Status fmi3EnterEventMode(fmi3Instance c)
{
    REQUIRE_INSTANCE;
    return (fmi3Status)instance_enter_event_mode(INST);
}

fmi3Status fmi3Terminate(fmi3Instance c)
{
    REQUIRE_INSTANCE;
    return (fmi3Status)instance_terminate(INST);
}

fmi3Status fmi3Reset(fmi3Instance c)
{
    REQUIRE_INSTANCE;
#ifdef BARE_COSIMULATION /* built as tools often export: no reset */
    log_error(INST, "Reset: this FMU cannot be reset.");
    return fmi3Error;
#else
    instance_reset(INST);
    return fmi3OK;
#endif
}

fmi3Status fmi3GetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t n_vr,
                          fmi3Float64 values[], size_t n_values)
{
    REQUIRE_INSTANCE;
    if (!instance_checks_array(INST, "fmi3GetFloat64", values, n_values, n_vr))
        return fmi3Error;
    return (fmi3Status)instance_get_real(INST, vr, n_vr, values);
}

fmi3Status fmi3SetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t n_vr,
                          const fmi3Float64 values[], size_t n_values)
{
    REQUIRE_INSTANCE;
    if (!instance_checks_array(INST, "fmi3SetFloat64", values, n_values, n_vr))
        return fmi3Error;
    return (fmi3Status)instance_set_real(INST, vr, n_vr, values);
}

fmi3Status fmi3GetInt32(fmi3Instance c, const fmi3ValueReference vr[], size_t n_vr,
                        fmi3Int32 values[], size_t n_values)
{
    REQUIRE_INSTANCE;
    if (!instance_checks_array(INST, "fmi3GetInt32", values, n_values, n_vr))
        return fmi3Error;
    return (fmi3Status)instance_get_integer(INST, vr, n_vr, values);
}

fmi3Status fmi3SetInt32(fmi3Instance c, const fmi3ValueReference vr[], size_t n_vr,
                        const fmi3Int32 values[], size_t n_values)
{
    REQUIRE_INSTANCE;
    if (!instance_checks_array(INST, "fmi3SetInt32", values, n_values, n_vr))
        return fmi3Error;
    return (fmi3Status)instance_set_integer(INST, vr, n_vr, values);
}

/* Getters and setters for types this framework has no variables of. */
#define NO_SUCH_TYPE(function, value_type)                                          \
    fmi3Status function(fmi3Instance c, const fmi3ValueReference vr[], size_t n_vr,  \
                        value_type values[], size_t n_values)                        \
    {                                                                                \
        REQUIRE_INSTANCE;                                                            \
        (void)vr, (void)values, (void)n_values;                                      \
        return (fmi3Status)instance_no_such_type(INST, #function, n_vr);             \
    }

NO_SUCH_TYPE(fmi3GetFloat32, fmi3Float32)
NO_SUCH_TYPE(fmi3GetInt8, fmi3Int8)
NO_SUCH_TYPE(fmi3GetUInt8, fmi3UInt8)
NO_SUCH_TYPE(fmi3GetInt16, fmi3Int16)
NO_SUCH_TYPE(fmi3GetUInt16, fmi3UInt16)
NO_SUCH_TYPE(fmi3GetUInt32, fmi3UInt32)
NO_SUCH_TYPE(fmi3GetInt64, fmi3Int64)
NO_SUCH_TYPE(fmi3GetUInt64, fmi3UInt64)
NO_SUCH_TYPE(fmi3GetBoolean, fmi3Boolean)
NO_SUCH_TYPE(fmi3GetString, fmi3String)
NO_SUCH_TYPE(fmi3SetFloat32, const fmi3Float32)
NO_SUCH_TYPE(fmi3SetInt8, const fmi3Int8)
NO_SUCH_TYPE(fmi3SetUInt8, const fmi3UInt8)
NO_SUCH_TYPE(fmi3SetInt16, const fmi3Int16)
NO_SUCH_TYPE(fmi3SetUInt16, const fmi3UInt16)
NO_SUCH_TYPE(fmi3SetUInt32, const fmi3UInt32)
NO_SUCH_TYPE(fmi3SetInt64, const fmi3Int64)
NO_SUCH_TYPE(fmi3SetUInt64, const fmi3UInt64)
NO_SUCH_TYPE(fmi3SetBoolean, const fmi3Boolean)
NO_SUCH_TYPE(fmi3SetString, const fmi3String)

fmi3Status fmi3GetBinary(fmi3Instance c, const fmi3ValueReference vr[], size_t n_vr,
                         size_t sizes[], fmi3Binary values[], size_t n_values)
{
    REQUIRE_INSTANCE;
    (void)vr, (void)sizes, (void)values, (void)n_values;
    return (fmi3Status)instance_no_such_type(INST, "fmi3GetBinary", n_vr);
}

fmi3Status fmi3SetBinary(fmi3Instance c, const fmi3ValueReference vr[], size_t n_vr,
                         const size_t sizes[], const fmi3Binary values[], size_t n_values)
{
    REQUIRE_INSTANCE;
    (void)vr, (void)sizes, (void)values, (void)n_values;
    return (fmi3Status)instance_no_such_type(INST, "fmi3SetBinary", n_vr);
}

fmi3Status fmi3GetClock(fmi3Instance c, const fmi3ValueReference vr[], size_t n_vr,
                        fmi3Clock values[])
{
    REQUIRE_INSTANCE;
    (void)vr, (void)values;
    return (fmi3Status)instance_no_such_type(INST, "fmi3GetClock", n_vr);
}

fmi3Status fmi3SetClock(fmi3Instance c, const fmi3ValueReference vr[], size_t n_vr,
                        const fmi3Clock values[])
{
    REQUIRE_INSTANCE;
    (void)vr, (void)values;
    return (fmi3Status)instance_no_such_type(INST, "fmi3SetClock", n_vr);
}

/* ---- FMU state ---- */

fmi3Status fmi3GetFMUState(fmi3Instance c, fmi3FMUState *state)
{
    REQUIRE_INSTANCE;
#ifdef BARE_COSIMULATION /* canGetAndSetFMUstate is false */
    (void)state;
    log_error(INST, "GetFMUstate: this FMU cannot save its state.");
    return fmi3Error;
#else
    return (fmi3Status)instance_get_snapshot(INST, state);
#endif
}

fmi3Status fmi3SetFMUState(fmi3Instance c, fmi3FMUState state)
{
    REQUIRE_INSTANCE;
    return (fmi3Status)instance_set_snapshot(INST, state);
}

fmi3Status fmi3FreeFMUState(fmi3Instance c, fmi3FMUState *state)
{
    REQUIRE_INSTANCE;
    return (fmi3Status)instance_free_snapshot(INST, state);
}

fmi3Status fmi3SerializedFMUStateSize(fmi3Instance c, fmi3FMUState state, size_t *size)
{
    REQUIRE_INSTANCE;
    (void)state;
    if (!size)
        return fmi3Error;
    *size = instance_serialized_size();
    return fmi3OK;
}

fmi3Status fmi3SerializeFMUState(fmi3Instance c, fmi3FMUState state, fmi3Byte bytes[],
                                 size_t size)
{
    REQUIRE_INSTANCE;
    return (fmi3Status)instance_serialize(INST, state, (char *)bytes, size);
}

fmi3Status fmi3DeserializeFMUState(fmi3Instance c, const fmi3Byte bytes[], size_t size,
                                   fmi3FMUState *state)
{
    REQUIRE_INSTANCE;
    return (fmi3Status)instance_deserialize(INST, (const char *)bytes, size, state);
}

/* ---- Not provided (the modelDescription says so) ---- */

static fmi3Status not_provided(fmi3Instance c, const char *function)
{
    REQUIRE_INSTANCE;
    log_error(INST, "%s is not provided by this FMU.", function);
    return fmi3Error;
}

fmi3Status fmi3GetNumberOfVariableDependencies(fmi3Instance c, fmi3ValueReference vr,
                                               size_t *n)
{
    (void)vr, (void)n;
    return not_provided(c, "fmi3GetNumberOfVariableDependencies");
}

fmi3Status fmi3GetVariableDependencies(fmi3Instance c, fmi3ValueReference dependent,
                                       size_t element_of_dependent[],
                                       fmi3ValueReference independents[],
                                       size_t element_of_independents[],
                                       fmi3DependencyKind kinds[], size_t n)
{
    (void)dependent, (void)element_of_dependent, (void)independents;
    (void)element_of_independents, (void)kinds, (void)n;
    return not_provided(c, "fmi3GetVariableDependencies");
}

fmi3Status fmi3GetDirectionalDerivative(fmi3Instance c, const fmi3ValueReference unknowns[],
                                        size_t n_unknowns, const fmi3ValueReference knowns[],
                                        size_t n_knowns, const fmi3Float64 seed[],
                                        size_t n_seed, fmi3Float64 sensitivity[],
                                        size_t n_sensitivity)
{
    REQUIRE_INSTANCE;
    if (n_seed != n_knowns || n_sensitivity != n_unknowns) {
        log_error(INST, "fmi3GetDirectionalDerivative: %zu seeds for %zu knowns and %zu "
                  "sensitivities for %zu unknowns (all are scalars).", n_seed, n_knowns,
                  n_sensitivity, n_unknowns);
        return fmi3Error;
    }
    return (fmi3Status)instance_get_directional_derivative(
        INST, unknowns, n_unknowns, knowns, n_knowns, seed, sensitivity,
        "fmi3GetDirectionalDerivative");
}

fmi3Status fmi3GetAdjointDerivative(fmi3Instance c, const fmi3ValueReference unknowns[],
                                    size_t n_unknowns, const fmi3ValueReference knowns[],
                                    size_t n_knowns, const fmi3Float64 seed[], size_t n_seed,
                                    fmi3Float64 sensitivity[], size_t n_sensitivity)
{
    (void)unknowns, (void)n_unknowns, (void)knowns, (void)n_knowns;
    (void)seed, (void)n_seed, (void)sensitivity, (void)n_sensitivity;
    return not_provided(c, "fmi3GetAdjointDerivative");
}

fmi3Status fmi3EnterConfigurationMode(fmi3Instance c)
{
    return not_provided(c, "fmi3EnterConfigurationMode");
}

fmi3Status fmi3ExitConfigurationMode(fmi3Instance c)
{
    return not_provided(c, "fmi3ExitConfigurationMode");
}

fmi3Status fmi3GetIntervalDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                  fmi3Float64 intervals[], fmi3IntervalQualifier q[])
{
    (void)vr, (void)n, (void)intervals, (void)q;
    return not_provided(c, "fmi3GetIntervalDecimal");
}

fmi3Status fmi3GetIntervalFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                   fmi3UInt64 counters[], fmi3UInt64 resolutions[],
                                   fmi3IntervalQualifier q[])
{
    (void)vr, (void)n, (void)counters, (void)resolutions, (void)q;
    return not_provided(c, "fmi3GetIntervalFraction");
}

fmi3Status fmi3GetShiftDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                               fmi3Float64 shifts[])
{
    (void)vr, (void)n, (void)shifts;
    return not_provided(c, "fmi3GetShiftDecimal");
}

fmi3Status fmi3GetShiftFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                fmi3UInt64 counters[], fmi3UInt64 resolutions[])
{
    (void)vr, (void)n, (void)counters, (void)resolutions;
    return not_provided(c, "fmi3GetShiftFraction");
}

fmi3Status fmi3SetIntervalDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                  const fmi3Float64 intervals[])
{
    (void)vr, (void)n, (void)intervals;
    return not_provided(c, "fmi3SetIntervalDecimal");
}

fmi3Status fmi3SetIntervalFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                   const fmi3UInt64 counters[],
                                   const fmi3UInt64 resolutions[])
{
    (void)vr, (void)n, (void)counters, (void)resolutions;
    return not_provided(c, "fmi3SetIntervalFraction");
}

fmi3Status fmi3SetShiftDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                               const fmi3Float64 shifts[])
{
    (void)vr, (void)n, (void)shifts;
    return not_provided(c, "fmi3SetShiftDecimal");
}

fmi3Status fmi3SetShiftFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                const fmi3UInt64 counters[], const fmi3UInt64 resolutions[])
{
    (void)vr, (void)n, (void)counters, (void)resolutions;
    return not_provided(c, "fmi3SetShiftFraction");
}

fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance c)
{
    return not_provided(c, "fmi3EvaluateDiscreteStates");
}

fmi3Status fmi3ActivateModelPartition(fmi3Instance c, fmi3ValueReference clock,
                                      fmi3Float64 activation_time)
{
    (void)clock, (void)activation_time;
    return not_provided(c, "fmi3ActivateModelPartition");
}

fmi3Status fmi3GetOutputDerivatives(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                    const fmi3Int32 orders[], fmi3Float64 values[],
                                    size_t n_values)
{
    (void)vr, (void)n, (void)orders, (void)values, (void)n_values;
    return not_provided(c, "fmi3GetOutputDerivatives");
}

/* ---- Model Exchange ---- */

fmi3Status fmi3UpdateDiscreteStates(fmi3Instance c, fmi3Boolean *needs_update,
                                    fmi3Boolean *terminate, fmi3Boolean *nominals_changed,
                                    fmi3Boolean *values_changed, fmi3Boolean *next_defined,
                                    fmi3Float64 *next_time)
{
    int states_changed = 0;
    Status status;
    REQUIRE_INSTANCE;
    status = instance_update_discrete(INST, &states_changed);
    if (needs_update) *needs_update = fmi3False;
    if (terminate) *terminate = fmi3False;
    if (nominals_changed) *nominals_changed = fmi3False;
    if (values_changed) *values_changed = states_changed ? fmi3True : fmi3False;
    if (next_defined) *next_defined = fmi3False;
    if (next_time) *next_time = 0.0;
    return (fmi3Status)status;
}

fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance c)
{
    REQUIRE_INSTANCE;
    return (fmi3Status)instance_enter_continuous_mode(INST);
}

fmi3Status fmi3CompletedIntegratorStep(fmi3Instance c, fmi3Boolean no_set_prior,
                                       fmi3Boolean *enter_event_mode,
                                       fmi3Boolean *terminate_simulation)
{
    REQUIRE_INSTANCE;
    (void)no_set_prior;
    if (!instance_allows_me(INST, "fmi3CompletedIntegratorStep", PH_CONT))
        return fmi3Error;
    if (enter_event_mode) *enter_event_mode = fmi3False;
    if (terminate_simulation) *terminate_simulation = fmi3False;
    return fmi3OK;
}

fmi3Status fmi3SetTime(fmi3Instance c, fmi3Float64 time)
{
    REQUIRE_INSTANCE;
    return (fmi3Status)instance_set_time(INST, time);
}

fmi3Status fmi3SetContinuousStates(fmi3Instance c, const fmi3Float64 x[], size_t n)
{
    REQUIRE_INSTANCE;
    return (fmi3Status)instance_set_states(INST, x, n);
}

fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance c, fmi3Float64 dx[], size_t n)
{
    REQUIRE_INSTANCE;
    return (fmi3Status)instance_get_derivatives(INST, dx, n);
}

fmi3Status fmi3GetEventIndicators(fmi3Instance c, fmi3Float64 z[], size_t n)
{
    REQUIRE_INSTANCE;
    return (fmi3Status)instance_get_event_indicators(INST, z, n);
}

fmi3Status fmi3GetContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t n)
{
    REQUIRE_INSTANCE;
    return (fmi3Status)instance_get_states(INST, x, n);
}

fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t n)
{
    REQUIRE_INSTANCE;
    return (fmi3Status)instance_get_nominals(INST, x, n);
}

fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance c, size_t *n)
{
    REQUIRE_INSTANCE;
    if (!n)
        return fmi3Error;
    *n = N_EVENT_INDICATORS;
    return fmi3OK;
}

fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance c, size_t *n)
{
    REQUIRE_INSTANCE;
    if (!n)
        return fmi3Error;
    *n = N_STATES;
    return fmi3OK;
}

/* ---- Co-Simulation ---- */

/* Step Mode is entered from Event Mode only, which this FMU does not have
 * (eventModeUsed is refused): after initialization it is in Step Mode already. */
fmi3Status fmi3EnterStepMode(fmi3Instance c)
{
    REQUIRE_INSTANCE;
    instance_allows(INST, "fmi3EnterStepMode", 0);
    return fmi3Error;
}

fmi3Status fmi3DoStep(fmi3Instance c, fmi3Float64 t, fmi3Float64 h,
                      fmi3Boolean no_set_prior, fmi3Boolean *event_handling_needed,
                      fmi3Boolean *terminate_simulation, fmi3Boolean *early_return,
                      fmi3Float64 *last_successful_time)
{
    Status status;
    REQUIRE_INSTANCE;
    (void)no_set_prior;
    status = instance_do_step(INST, t, h);
    if (event_handling_needed) *event_handling_needed = fmi3False;
    if (terminate_simulation) *terminate_simulation = fmi3False;
    if (early_return) *early_return = fmi3False;
    if (last_successful_time) *last_successful_time = INST->s.t;
    return (fmi3Status)status;
}
