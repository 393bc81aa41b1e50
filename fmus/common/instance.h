/* The FMI-version-independent core of an FMU instance: phases, variable
 * access by value reference, Model Exchange evaluation, the Co-Simulation
 * integrator and FMU state snapshots. fmi2.c and fmi3.c are thin layers
 * that translate the FMI 2.0 / 3.0 calls into these functions. */
#ifndef FMIBRIDGE_INSTANCE_H
#define FMIBRIDGE_INSTANCE_H

#include <stddef.h>
#include "model.h"

/* Status values shared by fmi2Status and fmi3Status (same numbering). */
typedef enum { ST_OK = 0, ST_WARNING = 1, ST_DISCARD = 2, ST_ERROR = 3 } Status;

/* Phases of the FMI state machine, as bits so that calls can list allowed sets. */
typedef enum {
    PH_INSTANTIATED = 1, PH_INIT = 2, PH_EVENT = 4, PH_CONT = 8,
    PH_STEP = 16, PH_TERMINATED = 32
} Phase;
#define PH_ANY (PH_INSTANTIATED | PH_INIT | PH_EVENT | PH_CONT | PH_STEP | PH_TERMINATED)

/* Everything that get/set FMU state and serialization save and restore. */
typedef struct {
    double t;
    double x[N_STATES_ALLOC];
    Model m;
    int pre[N_EVENT_INDICATORS_ALLOC]; /* when-condition z <= 0 at the last evaluation */
} Snapshot;

struct Instance;
/* Forwards one message to the host's logger (one implementation per FMI version). */
typedef void Emit(const struct Instance *inst, Status status, const char *category,
                  const char *message);

typedef struct Instance {
    Snapshot s;
    Phase phase;
    int is_cs;
    int logging_on;
    char *name;
    Emit *emit;
    void (*host_logger)(void); /* the host's callback, cast back by `emit` */
    void *host_env;
} Instance;

Instance *instance_new(const char *name, int is_cs, Emit *emit);
void instance_free(Instance *inst);
void instance_reset(Instance *inst);

void log_error(const Instance *inst, const char *format, ...);
void log_info(const Instance *inst, const char *format, ...);
/* 1 if the current phase is in `phases`; otherwise logs why and returns 0. */
int instance_allows(const Instance *inst, const char *function, unsigned phases);
/* instance_allows for a Model Exchange function: a Co-Simulation instance is refused. */
int instance_allows_me(const Instance *inst, const char *function, unsigned phases);
/* 1 if `n` values were passed in a non-NULL array; otherwise logs and returns 0. */
int instance_checks_array(const Instance *inst, const char *function, const void *array,
                          size_t n, size_t expected);

Status instance_get_real(Instance *inst, const unsigned *vr, size_t n, double *value);
Status instance_set_real(Instance *inst, const unsigned *vr, size_t n, const double *value);
Status instance_get_integer(Instance *inst, const unsigned *vr, size_t n, int *value);
Status instance_set_integer(Instance *inst, const unsigned *vr, size_t n, const int *value);
/* The value references of the continuous states, in state order (FMI 1.0). */
Status instance_get_state_references(Instance *inst, unsigned *vr, size_t n);
/* Any other variable type: there are none, so only n == 0 succeeds. */
Status instance_no_such_type(Instance *inst, const char *function, size_t n);

Status instance_setup(Instance *inst, double start_time);
Status instance_enter_initialization(Instance *inst);
Status instance_exit_initialization(Instance *inst);
Status instance_enter_event_mode(Instance *inst);
Status instance_enter_continuous_mode(Instance *inst);
Status instance_terminate(Instance *inst);

Status instance_set_time(Instance *inst, double t);
Status instance_set_states(Instance *inst, const double *x, size_t n);
Status instance_get_states(Instance *inst, double *x, size_t n);
Status instance_get_nominals(Instance *inst, double *x, size_t n);
Status instance_get_derivatives(Instance *inst, double *dx, size_t n);
Status instance_get_event_indicators(Instance *inst, double *z, size_t n);
/* Fires the `when` clauses whose condition became true; sets *states_changed. */
Status instance_update_discrete(Instance *inst, int *states_changed);

/* sensitivity = J seed, J = d der(x) / dx of the model (`model_jacobian`): the
 * unknowns must be state derivatives and the knowns states (Model Exchange). */
Status instance_get_directional_derivative(Instance *inst, const unsigned *unknowns,
                                           size_t n_unknowns, const unsigned *knowns,
                                           size_t n_knowns, const double *seed,
                                           double *sensitivity, const char *function);

Status instance_do_step(Instance *inst, double t, double h);

Status instance_get_snapshot(Instance *inst, void **snapshot);
Status instance_set_snapshot(Instance *inst, const void *snapshot);
Status instance_free_snapshot(Instance *inst, void **snapshot);
size_t instance_serialized_size(void);
Status instance_serialize(Instance *inst, const void *snapshot, char *bytes, size_t size);
Status instance_deserialize(Instance *inst, const char *bytes, size_t size, void **snapshot);

#endif
