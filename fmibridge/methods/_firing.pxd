from ._mode cimport CompiledMode


cdef object fire(object method, CompiledMode cm, object log, double t, object x,
                 Py_ssize_t i, tuple others, bint in_walk=*, double step_rate=*)
cdef int fire_in_place(object method, CompiledMode cm, object log, double t,
                       double* x, Py_ssize_t i) except -1
cdef bint fires_in_place(CompiledMode cm, Py_ssize_t i) noexcept
