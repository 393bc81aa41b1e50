/* The per-model interface: what a model's C file implements.
 *
 * A model file includes this header and defines the equations only; the
 * framework (instance.c, fmi2.c, fmi3.c) implements FMI around them.
 * Sizes and index names (X_h, P_g, U_lam, I_contact, Y_gap, ...) come from
 * model_table.h, which fmus/build.py generates from the model's
 * model.toml, the single source of truth for variables and value references.
 */
#ifndef FMIBRIDGE_MODEL_H
#define FMIBRIDGE_MODEL_H

#include "model_table.h"

/* Everything the equations may read besides time and the states. */
typedef struct {
    double p[N_REAL_PARAMS_ALLOC];  /* real parameters, index P_<name> */
    double u[N_REAL_INPUTS_ALLOC];  /* real inputs, index U_<name> */
    int i[N_INTEGERS_ALLOC];        /* integer parameters and inputs, I_<name> */
    double d[N_DISCRETES_ALLOC];    /* discrete Reals, D_<name>: set by model_when */
} Model;

/* dx/dt = f(t, x, p, u, i): a pure function, called at arbitrary (t, x). */
void model_derivatives(const Model *m, double t, const double *x, double *dx);

#if HAS_JACOBIAN
/* J = d dx / dx at (t, x), row-major (J[i * N_STATES + j] = d dx_i / d x_j):
 * what fmi2/fmi3GetDirectionalDerivative multiply seeds by; a model declares
 * it with `jacobian = true` in model.toml. */
void model_jacobian(const Model *m, double t, const double *x, double *J);
#endif

#if N_OUTPUTS > 0
/* Computed outputs y (index Y_<name>), a pure function like the derivatives. */
void model_outputs(const Model *m, double t, const double *x, double *y);
#endif

#if N_EVENT_INDICATORS > 0
/* `when z[k] <= 0 then ... end when;`: called once when event indicator k
 * falls to <= 0 (the condition becomes true); may reinit the states x and
 * assign the discrete Reals m->d (nothing else of m). */
void model_when(Model *m, int k, double t, double *x);
#endif

#endif
