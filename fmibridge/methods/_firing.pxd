from ._mode cimport CompiledMode


# What a firing takes of its method: `Method.resets_on_approach` and
# `location_tolerance` (each Event's t_tol).
ctypedef struct Firing:
    bint on_approach
    double t_tol


cdef object fire(Firing how, CompiledMode cm, object log, double t, object x,
                 Py_ssize_t i, tuple others, bint in_walk=*, double step_rate=*)
cdef int fire_in_place(Firing how, CompiledMode cm, object log, double t,
                       double* x, Py_ssize_t i) except -1
