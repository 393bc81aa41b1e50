/* Declarations shared by the core files only (not by the FMI layers). */
#ifndef FMIBRIDGE_CORE_H
#define FMIBRIDGE_CORE_H

#include "instance.h"

typedef enum {
    VK_TIME, VK_STATE, VK_DERIVATIVE, VK_PARAM, VK_INPUT, VK_OUTPUT,
    VK_INT_PARAM, VK_INT_INPUT, VK_DISCRETE
} VarKind;

/* One row of the generated variable table (MODEL_VARIABLES in model_table.h). */
typedef struct {
    unsigned vr;
    const char *name;
    VarKind kind;
    int index;
} VarInfo;

/* Event indicator k is the Real variable EVENT_INDICATOR_VARIABLES[k]. */
typedef struct {
    VarKind kind;
    int index;
} VarRef;

/* Value of a Real variable at time t and states x. */
double core_real_value(const Model *m, double t, const double *x, VarKind kind, int index);
/* Event indicators z at time t and states x. */
void core_event_indicators(const Model *m, double t, const double *x, double *z);
/* Re-arms each `when z <= 0` whose condition is false at the current state. */
void core_rearm_when(Instance *inst);
/* Fires the `when` clauses whose condition became true; 1 if any fired. */
int core_fire_when(Instance *inst);

#endif
